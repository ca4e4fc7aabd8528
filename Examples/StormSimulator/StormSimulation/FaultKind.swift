/// How the simulated server misbehaves during a ``FaultWindow``.
public struct FaultKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The identifier.
    public let rawValue: String

    /// Creates a kind.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The server answers at once with an error (503, connection refused).
    public static let failFast = FaultKind(rawValue: "fail-fast")
    /// The server never answers (a black hole); the client finds out only through its timeout.
    public static let blackHole = FaultKind(rawValue: "black-hole")

    /// The identifier.
    public var description: String { rawValue }
}
