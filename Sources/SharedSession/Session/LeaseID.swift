/// Names one lease of a session: a session lease or a duck lease. Unique within a session.
public struct LeaseID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number; leases are numbered in the order they were made.
    public let rawValue: UInt64

    /// Wraps a raw number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: LeaseID, rhs: LeaseID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "lease#\(rawValue)" }
}
