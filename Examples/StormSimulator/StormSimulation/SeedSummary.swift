/// One measure over many seeds: how many seeds passed, the median and the spread.
public struct SeedSummary: Sendable {
    /// The measure per seed, in seed order.
    public var values: [Double]
    /// Whether each seed passed.
    public var passed: [Bool]

    /// Creates a summary of `values`, each seed passing when `passes` says so.
    public init(_ values: [Double], passes: (Double) -> Bool = { _ in true }) {
        self.values = values
        passed = values.map(passes)
    }

    /// Creates a summary from values and verdicts worked out together.
    public init(values: [Double], passed: [Bool]) {
        self.values = values
        self.passed = passed
    }

    /// Seeds that passed.
    public var passCount: Int { passed.filter { $0 }.count }
    /// The median (mean of the two middle values for an even count).
    public var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    /// The mean.
    public var mean: Double { values.isEmpty ? .nan : values.reduce(0, +) / Double(values.count) }
    /// The smallest value.
    public var minimum: Double { values.min() ?? .nan }
    /// The largest value.
    public var maximum: Double { values.max() ?? .nan }
    /// Whether at least 19 of 20 seeds (95 %, rounded up) passed.
    public var holds: Bool { passCount * 20 >= values.count * 19 }
}

/// A goal checked over every seed.
public struct Goal: Sendable {
    /// The goal, as a sentence.
    public var name: String
    /// The strategy it is about.
    public var strategy: String
    /// The target (e.g. `≤ 1.10×`).
    public var target: String
    /// The measure per seed and the verdicts.
    public var summary: SeedSummary
    /// Formats a value of the measure.
    public var format: @Sendable (Double) -> String
}

/// A published number reproduced in its own model.
public struct Calibration: Sendable {
    /// The experiment and row.
    public var name: String
    /// The published value.
    public var anchor: Double
    /// The tolerance, as a fraction of the anchor.
    public var tolerance: Double
    /// The measure per seed.
    public var summary: SeedSummary
    /// Whether the mean over the seeds is within the tolerance of the anchor.
    public var holds: Bool { abs(summary.mean - anchor) <= tolerance * anchor }
}

/// A table of the report.
public struct ReportTable: Sendable {
    /// The section title.
    public var title: String
    /// Lines of text above the table (settings).
    public var notes: [String]
    /// The header cells.
    public var header: [String]
    /// The rows.
    public var rows: [[String]]
}
