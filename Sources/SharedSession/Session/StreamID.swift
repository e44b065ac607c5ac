/// Names one stream of an engine.
public struct StreamID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number the session gave the stream; unique within a session.
    public let rawValue: UInt64

    /// Wraps a raw number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "stream#\(rawValue)" }
}
