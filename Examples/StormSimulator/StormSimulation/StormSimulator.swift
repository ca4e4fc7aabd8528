/// Runs strategies against scenarios on a virtual clock: deterministic for a given seed.
public enum StormSimulator {
    /// Runs `strategy` in `scenario` with `seed`; the same arguments always give the same result.
    public static func run(_ scenario: Scenario, strategy: ClientStrategy, seed: UInt64) -> SimulationResult {
        SimulationEngine(scenario: scenario, strategy: strategy, seed: seed).run()
    }
}
