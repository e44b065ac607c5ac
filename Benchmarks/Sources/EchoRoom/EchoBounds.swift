/// The bounds `PipeWireEchoCancelTests` keeps, printed beside the figures (kept in step with the test).
enum EchoBounds {
    /// The echo clearly cancelled: ERLE at least this, in dB.
    static let erle = 10.0
    /// The near-end talker kept: its level in the capture against in the microphone, in dB.
    static let nearEndKept = -10.0...1.0
}
