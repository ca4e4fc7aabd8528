/// Whether one strategy recovered from Bronson's outage at each offered load.
public struct StabilityRow: Hashable, Sendable {
    /// The strategy's name.
    public var strategy: String
    /// Offered load as a fraction of capacity, with whether the system recovered.
    public var loads: [StabilityPoint]

    /// Creates a row.
    public init(strategy: String, loads: [StabilityPoint]) {
        self.strategy = strategy
        self.loads = loads
    }

    /// The highest offered load (fraction of capacity) up to which every tested load recovered; 0 if none.
    public var highestStable: Double {
        var highest = 0.0
        for point in loads {
            guard point.recovered else { break }
            highest = point.fraction
        }
        return highest
    }
}

/// One offered load of a ``StabilityRow``.
public struct StabilityPoint: Hashable, Sendable {
    /// Offered load as a fraction of capacity.
    public var fraction: Double
    /// Time to recover after the outage, `nil` if it never did.
    public var recovery: Duration?
    /// Whether it recovered within the limit.
    public var recovered: Bool

    /// Creates a point.
    public init(fraction: Double, recovery: Duration?, recovered: Bool) {
        self.fraction = fraction
        self.recovery = recovery
        self.recovered = recovered
    }
}
