/// One of the goals for the default pipeline, with the measured value and whether it holds.
public struct GoalCheck: Hashable, Sendable {
    /// What the goal asks.
    public var goal: String
    /// What the simulation measured.
    public var measured: String
    /// Whether the measurement meets the goal.
    public var passed: Bool

    /// Creates a check.
    public init(goal: String, measured: String, passed: Bool) {
        self.goal = goal
        self.measured = measured
        self.passed = passed
    }
}
