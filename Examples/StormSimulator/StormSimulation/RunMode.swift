/// How much to simulate: `quick` for CI (a few seconds), `full` for the published charts.
public struct RunMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The identifier.
    public let rawValue: String

    /// Creates a mode.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Shorter scenarios and coarser sweeps.
    public static let quick = RunMode(rawValue: "quick")
    /// Every scenario at full length.
    public static let full = RunMode(rawValue: "full")

    /// The identifier.
    public var description: String { rawValue }

    /// True for ``quick``.
    var isQuick: Bool { self == .quick }
}
