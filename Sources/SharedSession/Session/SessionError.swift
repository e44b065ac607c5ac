/// The error every SharedSession API throws.
///
/// An error names what was wrong and how to fix it. Nothing the caller already held is lost when
/// one is thrown: a refused request changes no count, no lease and no volume.
///
/// Codes are a struct over a private enum, as in swift-service-lifecycle's `ServiceGroupError`, so
/// new codes are not a breaking change; match on them with `==`.
public struct SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidValue
            case invalidConfiguration
            case activationRefused
            case engineUnavailable
            case streamRefused
            case unknownStream
            case unknownTarget
            case mainStreamAlreadyOpen
            case quantumOutOfRange
            case fileError
            case connectionLost
            case sessionClosed
            case limitExceeded
            case invalidRecording
            case mediaUnreadable
            case noAudioTrack
            case protocolViolation
            case accessRefused
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The code whose ``description`` is `name`, if there is one: how a recording reads it back
        /// (`package`: SharedSessionRecording's decoder).
        package init?(named name: String) {
            guard let base = Base(rawValue: name) else { return nil }
            self.init(base)
        }

        /// A number was NaN, infinite or out of its range (a volume above 1, a negative duck level).
        public static let invalidValue = Code(.invalidValue)
        /// A category, option and mode combination the session semantics do not allow.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The engine refused to activate a session configuration.
        public static let activationRefused = Code(.activationRefused)
        /// No sound server could be reached.
        public static let engineUnavailable = Code(.engineUnavailable)
        /// The engine or the server refused to open a stream.
        public static let streamRefused = Code(.streamRefused)
        /// The stream named is not open on this engine.
        public static let unknownStream = Code(.unknownStream)
        /// The device or node named as a target does not exist.
        public static let unknownTarget = Code(.unknownTarget)
        /// A second main stream was opened while one is open.
        public static let mainStreamAlreadyOpen = Code(.mainStreamAlreadyOpen)
        /// A render call asked for a number of frames the engine does not accept.
        public static let quantumOutOfRange = Code(.quantumOutOfRange)
        /// Reading or writing an audio file failed.
        public static let fileError = Code(.fileError)
        /// The connection to the sound server broke.
        public static let connectionLost = Code(.connectionLost)
        /// The session was closed; make a new one.
        public static let sessionClosed = Code(.sessionClosed)
        /// A unit asked for more than its limits allow, and the policy refuses such requests.
        public static let limitExceeded = Code(.limitExceeded)
        /// A session recording could not be read: malformed, from a newer format version, or naming a
        /// lease or stream it never opened. The message names the line.
        public static let invalidRecording = Code(.invalidRecording)
        /// A media file could not be decoded: not a media file, damaged or truncated, or a codec this
        /// FFmpeg build has no decoder for.
        public static let mediaUnreadable = Code(.mediaUnreadable)
        /// A media file has no audio track to play.
        public static let noAudioTrack = Code(.noAudioTrack)

        /// A line between a remote unit and its host broke the protocol: malformed JSON, a line over the
        /// length limit, an unknown message, an input a unit may not send, or another owner's lease.
        public static let protocolViolation = Code(.protocolViolation)
        /// A session server refused a connection: another user, an owner name the host's policy does not
        /// allow or already connected, a protocol version it does not speak, or too many units.
        public static let accessRefused = Code(.accessRefused)

        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What was wrong and how to fix it.
    public let message: String
    /// The file that raised the error.
    public let file: String
    /// The line that raised the error.
    public let line: Int

    /// Creates an error. Prefer the factory methods, which word the message consistently.
    public init(code: Code, message: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    public var description: String { "SessionError.\(code): \(message)" }

    /// Two errors are equal when code and message match; where they were raised does not count.
    public static func == (lhs: SessionError, rhs: SessionError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}

extension SessionError {
    /// A numeric argument that was NaN, infinite or out of range.
    public static func invalidValue(
        _ name: String, _ value: Double, fix: String, file: String = #fileID, line: Int = #line
    ) -> SessionError {
        SessionError(code: .invalidValue, message: "\(name) \(value) is not allowed: \(fix)", file: file, line: line)
    }

    /// Checks that a gain, volume or level is a finite number from 0 through 1.
    static func checkUnitInterval(
        _ value: Float, name: String, file: String = #fileID, line: Int = #line
    ) throws(SessionError) {
        guard value.isFinite, value >= 0, value <= 1 else {
            throw invalidValue(name, Double(value), fix: "pass a finite value from 0 through 1", file: file, line: line)
        }
    }

    /// Checks that a fade or ramp duration is not negative and at most ten seconds.
    static func checkFade(
        _ value: Duration, name: String, file: String = #fileID, line: Int = #line
    ) throws(SessionError) {
        guard value >= .zero, value <= .seconds(10) else {
            throw invalidValue(
                name, value.inSeconds, fix: "use a duration from 0 through 10 seconds", file: file, line: line)
        }
    }
}
