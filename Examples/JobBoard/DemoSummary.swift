import Foundation
import ResilienceKit

/// What `job-board --json` prints: the last round per source, the user-facing message, telemetry and health.
struct DemoSummary: Encodable {
    struct SourceSummary: Encodable {
        var id: String
        var name: String
        var kind: String
        var simulates: String
        var status: String
        var jobs: Int
        var attempts: Int
        var breaker: String
        var category: String?
        var code: String?
        var httpStatus: Int?
        var retryAfterSeconds: Double?
        var cacheAgeSeconds: Double?
        var reason: String?
    }

    struct Message: Encodable {
        var title: String
        var message: String
        var severity: String
        var code: String
        var retryAfterSeconds: Double?
    }

    struct Telemetry: Encodable {
        var fetches: Int
        var partialFetches: Int
        var attempts: Int
        var failedAttempts: Int
        var retryAttempts: Int
        var retrySuccessRate: Double?
        var errorRate: Double?
        var insecureTransportBlocks: Int
        var mostFrequentError: String?
        var failuresByCategory: [String: Int]
    }

    struct Health: Encodable {
        var status: String
        var healthy: Bool
        var alerts: [String]
    }

    var seed: UInt64
    var rounds: Int
    var chaos: Double
    var durationSeconds: Double
    var serverRequests: Int
    var jobsShown: Int
    var jobs: [Job]
    var sourcesDelivered: Int
    var sourcesTotal: Int
    var sources: [SourceSummary]
    var userMessage: Message?
    var telemetry: Telemetry
    var health: Health
    var configuration: String

    init(
        options: DemoOptions, boards: DemoBoards, scenario: JobBoardScenario, outcome result: FetchOutcome<Job>,
        duration: Duration,
        statistics: TelemetryStatistics, health: HealthReport
    ) {
        seed = options.seed
        rounds = options.rounds
        chaos = options.chaos
        durationSeconds = duration.seconds
        serverRequests = boards.server.requestCount
        jobsShown = result.items.count
        jobs = result.items
        sourcesDelivered = result.report.deliveredCount
        sourcesTotal = result.report.sources.count
        sources = result.report.sources.map { report in
            let failure = report.status == .succeeded ? nil : report.classification
            return SourceSummary(
                id: report.id.rawValue, name: report.displayName, kind: report.kind.description,
                simulates: boards.roles.first { $0.id == report.id }?.simulates ?? "",
                status: report.status.rawValue, jobs: report.itemCount, attempts: report.attempts,
                breaker: (statistics.sources[report.id.rawValue]?.breakerState ?? .closed).rawValue,
                category: failure?.category.description, code: failure.map { "\($0.code)" },
                httpStatus: failure?.httpStatus, retryAfterSeconds: failure?.retryAfter?.seconds,
                cacheAgeSeconds: report.cacheAge?.seconds, reason: failure?.message)
        }
        userMessage = result.message.map {
            Message(
                title: $0.title, message: $0.message, severity: $0.severity.rawValue, code: "\($0.code)",
                retryAfterSeconds: $0.retryAfter?.seconds)
        }
        let attempts = statistics.sources.values.reduce(0) { $0 + $1.attempts }
        let failed = statistics.sources.values.reduce(0) { $0 + $1.failures }
        telemetry = Telemetry(
            fetches: statistics.fetches, partialFetches: statistics.partialFetches, attempts: attempts,
            failedAttempts: failed, retryAttempts: statistics.retryAttempts,
            retrySuccessRate: statistics.retrySuccessRate, errorRate: statistics.errorRate,
            insecureTransportBlocks: statistics.insecureTransportBlocks,
            mostFrequentError: statistics.mostFrequentError.map { "\($0.code) ×\($0.count)" },
            failuresByCategory: Dictionary(
                uniqueKeysWithValues: statistics.categoryDistribution.map { ($0.key.description, $0.value) }))
        self.health = Health(
            status: health.status.map { "\($0)" } ?? "healthy", healthy: health.isHealthy,
            alerts: health.alerts.map(\.description))
        configuration = scenario.root.configurationDescription
    }

    /// Pretty-printed, keys sorted.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The human-readable summary.
    func text(banner: String?) -> String {
        var lines = [
            "Summary: \(rounds) rounds in \(String(format: "%.1f", durationSeconds)) s, "
                + "\(serverRequests) requests reached the embedded server (seed \(seed))",
            "",
            "Jobs found per source (last round):",
        ]
        let width = sources.map(\.id.count).max() ?? 0
        for source in sources {
            let padded = source.id.padding(toLength: width, withPad: " ", startingAt: 0)
            var line = "  \(padded)  \(String(format: "%2d", source.jobs)) jobs  \(source.status)"
            if let category = source.category, let code = source.code { line += " (\(category), \(code))" }
            line += "  — \(source.simulates)"
            lines.append(line)
        }
        lines += ["", "\(jobsShown) unique jobs shown after the last round; one from each source that delivered:"]
        var seen = Set<String>()
        let oneEach = jobs.filter { seen.insert($0.source).inserted }
        lines += oneEach.map { "  \($0.title) — \($0.company), \($0.location) (\($0.source))" }
        lines += ["", "What the user sees (DefaultErrorPresenter):", "  " + (banner ?? "✔ Every source delivered.")]
        lines += [
            "",
            "Telemetry (TelemetryRecorder):",
            "  fetches \(telemetry.fetches) (partial \(telemetry.partialFetches)), attempts \(telemetry.attempts) "
                + "(failed \(telemetry.failedAttempts)), retries \(telemetry.retryAttempts), retry success "
                + percent(telemetry.retrySuccessRate) + ", error rate " + percent(telemetry.errorRate),
            "  plaintext requests blocked \(telemetry.insecureTransportBlocks), most frequent error "
                + (telemetry.mostFrequentError ?? "none"),
            "  failures by category: "
                + telemetry.failuresByCategory.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", "),
            "",
            "Health (HealthMonitor): \(health.status)",
        ]
        lines += health.alerts.isEmpty ? ["  no alerts"] : health.alerts.map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    private func percent(_ value: Double?) -> String {
        value.map { String(format: "%.0f %%", $0 * 100) } ?? "n/a"
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
