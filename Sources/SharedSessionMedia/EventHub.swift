import SharedSession

/// Delivers a source's events to its ``MediaFileSource/events`` subscribers and its handler, on
/// the thread that emits them (the decoder thread, or the thread making the source).
///
/// Events emitted before anyone listened (a damaged packet found while the source was made, an end
/// reached before the host subscribed) are kept, the first 64, and every listener starts with them:
/// each new ``MediaFileSource/events`` sequence and each handler set, not only the first. Events
/// emitted once someone listens go to the listeners of that moment and are not kept.
typealias EventHub = Broadcast<MediaEvent, MediaEvent>

extension EventHub {
    /// The events kept for the listeners to come.
    static var backlogLimit: Int { 64 }

    convenience init() {
        self.init(backlogLimit: Self.backlogLimit, replay: .toEveryListener)
    }
}
