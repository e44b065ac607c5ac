/// The effects of the input being handled, in order: what every part of the state appends to, and
/// what ``SessionState/apply(_:at:)`` hands back.
///
/// Events are built only when someone receives them (`emitsEvents`): the autoclosures mean an event
/// with no receiver (and the lease or duck record copied into it) is never made. The coordination
/// benchmark and the allocation tests of `RealtimeRenderTests` (optimised, an acquire or duck pair
/// allocates only its lease) show both matter: building the events nobody gets was 4 of the 12
/// allocations of a duck pair before.
struct EffectLog: Sendable {
    private(set) var effects: [SessionEffect] = []
    var emitsEvents = true

    mutating func append(_ effect: SessionEffect) {
        effects.append(effect)
    }

    mutating func emit(_ kind: @autoclosure () -> SessionEvent.Kind, _ cause: @autoclosure () -> EventCause) {
        guard emitsEvents else { return }
        effects.append(.emit(SessionEvent(kind(), cause: cause())))
    }

    /// Hands over the effects built so far. The buffer itself goes to the caller (no copy).
    mutating func take() -> [SessionEffect] {
        var taken: [SessionEffect] = []
        swap(&taken, &effects)
        return taken
    }

    /// Takes an empty buffer to build the next input's effects in: a caller that gives back the
    /// buffer of its last effects (``SharedSession`` keeps one per session) makes inputs that allocate
    /// nothing for their effects. `buffer` receives what the log had instead.
    mutating func reuse(_ buffer: inout [SessionEffect]) {
        buffer.removeAll(keepingCapacity: true)
        if effects.isEmpty, effects.capacity < buffer.capacity { swap(&effects, &buffer) }
    }
}
