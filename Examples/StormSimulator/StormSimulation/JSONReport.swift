/// Renders a ``StormReport`` as JSON with a fixed key order and fixed number formatting.
public enum JSONReport {
    /// The whole report as pretty-printed JSON.
    public static func render(_ report: StormReport) -> String {
        var fields: [String] = []
        fields.append("\"mode\": \(FixedFormat.jsonString(report.mode.rawValue))")
        fields.append("\"seed\": \(report.seed)")
        fields.append("\"goals\": " + array(report.goals.map(goal), indent: 1))
        fields.append("\"outage\": " + run(report.outage))
        fields.append("\"aws\": " + run(report.aws))
        fields.append("\"awsOutage\": " + run(report.awsOutage))
        fields.append("\"independent\": " + array(report.independent.map(point), indent: 1))
        fields.append("\"metastable\": " + run(report.metastable))
        fields.append("\"stability\": " + array(report.stability.map(stability), indent: 1))
        fields.append("\"brownout\": " + run(report.brownout))
        fields.append("\"tail\": " + array(report.tail.map(tail), indent: 1))
        return "{\n  " + fields.joined(separator: ",\n  ") + "\n}\n"
    }

    static func array(_ items: [String], indent: Int) -> String {
        guard !items.isEmpty else { return "[]" }
        let pad = String(repeating: "  ", count: indent + 1)
        let close = String(repeating: "  ", count: indent)
        return "[\n" + items.map { pad + $0 }.joined(separator: ",\n") + "\n" + close + "]"
    }

    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(FixedFormat.jsonString($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    static func seconds(_ duration: Duration?) -> String {
        duration.map { FixedFormat.jsonNumber($0.seconds, decimals: 4) } ?? "null"
    }

    static func goal(_ goal: GoalCheck) -> String {
        object([
            ("goal", FixedFormat.jsonString(goal.goal)), ("measured", FixedFormat.jsonString(goal.measured)),
            ("passed", goal.passed ? "true" : "false"),
        ])
    }

    static func run(_ run: ScenarioRun) -> String {
        let results = run.results.map { result in
            object([
                ("strategy", FixedFormat.jsonString(result.strategy)),
                ("logicalRequests", "\(result.logicalRequests)"), ("attempts", "\(result.attempts)"),
                ("successes", "\(result.successes)"), ("failures", "\(result.failures)"),
                ("unfinished", "\(result.unfinished)"),
                ("amplification", FixedFormat.jsonNumber(result.amplification)),
                ("amplificationDuringFault", FixedFormat.jsonNumber(run.amplificationDuring(result))),
                ("amplificationAfterFault", FixedFormat.jsonNumber(run.amplificationAfter(result))),
                ("peakLoadPerSecond", FixedFormat.jsonNumber(result.peakLoad, decimals: 1)),
                ("recoverySeconds", seconds(run.recovery(result))),
                ("completionSeconds", seconds(result.completionTime)),
                ("rejectedByBreaker", "\(result.rejectedByBreaker)"),
                ("rejectedByLimiter", "\(result.rejectedByLimiter)"),
                ("deniedByBudget", "\(result.deniedByBudget)"), ("wastedWork", "\(result.wastedWork)"),
                ("attemptsPerBucket", "[" + result.attemptsPerBucket.map(String.init).joined(separator: ",") + "]"),
                ("successesPerBucket", "[" + result.successesPerBucket.map(String.init).joined(separator: ",") + "]"),
            ])
        }
        return object([
            ("scenario", FixedFormat.jsonString(run.scenario.id)),
            ("title", FixedFormat.jsonString(run.scenario.title)),
            ("bucketSeconds", seconds(run.scenario.bucket)), ("faultStartSeconds", seconds(run.faultStart)),
            ("faultEndSeconds", seconds(run.faultEnd)), ("schedule", FixedFormat.jsonString(run.schedule.description)),
            ("results", array(results, indent: 2)),
        ])
    }

    static func point(_ point: SweepPoint) -> String {
        object([
            ("strategy", FixedFormat.jsonString(point.strategy)), ("p", FixedFormat.jsonNumber(point.p)),
            ("n", "\(point.maxAttempts)"), ("successRate", FixedFormat.jsonNumber(point.successRate, decimals: 6)),
            ("successBound", FixedFormat.jsonNumber(point.successBound, decimals: 6)),
            ("load", FixedFormat.jsonNumber(point.load)), ("loadBound", FixedFormat.jsonNumber(point.loadBound)),
        ])
    }

    static func stability(_ row: StabilityRow) -> String {
        let loads = row.loads.map { point in
            object([
                ("fraction", FixedFormat.jsonNumber(point.fraction)), ("recoverySeconds", seconds(point.recovery)),
                ("recovered", point.recovered ? "true" : "false"),
            ])
        }
        return object([
            ("strategy", FixedFormat.jsonString(row.strategy)),
            ("highestStable", FixedFormat.jsonNumber(row.highestStable)),
            ("loads", "[" + loads.joined(separator: ", ") + "]"),
        ])
    }

    static func tail(_ row: TailRow) -> String {
        object([
            ("strategy", FixedFormat.jsonString(row.strategy)), ("hedgeDelaySeconds", seconds(row.hedgeDelay)),
            ("p50Seconds", seconds(row.p50)), ("p95Seconds", seconds(row.p95)), ("p99Seconds", seconds(row.p99)),
            ("p999Seconds", seconds(row.p999)), ("load", FixedFormat.jsonNumber(row.load)),
            ("successRate", FixedFormat.jsonNumber(row.successRate, decimals: 6)),
        ])
    }
}
