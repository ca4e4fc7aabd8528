import Foundation
import ResilienceKit

/// `GET /jobs`: the merged jobs, one report per source, and the one honest message for the person reading.
public struct JobsResponse: Codable, Sendable {
    /// The user-facing message, when not every source delivered.
    public struct Message: Codable, Sendable {
        /// The headline.
        public var title: String
        /// The sentence shown to the user ("Showing jobs from 4 of 6 sources. …").
        public var message: String
        /// `info`, `warning` or `error`.
        public var severity: String
        /// The stable code of the failure it describes.
        public var code: String
        /// What the user can do, if anything.
        public var suggestedAction: String?
        /// Whether a retry button makes sense.
        public var showsRetry: Bool
    }

    /// How one source ended.
    public struct SourceEntry: Codable, Sendable {
        /// The source id.
        public var id: String
        /// Its name for people.
        public var displayName: String
        /// What the source stands for (``JobBoardServiceConfiguration/sourceDescriptions``), if described.
        public var simulates: String?
        /// `succeeded`, `failed`, `skipped-circuit-open`, `served-from-cache` …
        public var status: String
        /// Items it contributed.
        public var items: Int
        /// Pipeline calls, retries included.
        public var attempts: Int
        /// Its part of the fetch, in seconds.
        public var durationSeconds: Double
        /// Its circuit breaker's state as telemetry last saw it.
        public var breaker: String
        /// The failure's category (`timeout`), when it did not succeed live.
        public var category: String?
        /// The failure's stable code (`NET_002`).
        public var code: String?
        /// The failure's HTTP status.
        public var httpStatus: Int?
    }

    /// One job.
    public struct Posting: Codable, Sendable {
        /// The title.
        public var title: String
        /// The company.
        public var company: String
        /// Where.
        public var location: String
        /// The posting's URL.
        public var url: String
        /// The source that delivered it.
        public var source: String
    }

    /// The user-facing message, or `nil` when every source delivered live.
    public var message: Message?
    /// Sources that delivered (live, fallback or cache).
    public var delivered: Int
    /// Sources asked.
    public var total: Int
    /// The whole fetch, in seconds.
    public var durationSeconds: Double
    /// One entry per source, in registration order.
    public var sources: [SourceEntry]
    /// The merged, de-duplicated jobs.
    public var jobs: [Posting]

    init(outcome: FetchOutcome<Job>, breakerStates: [String: BreakerState], descriptions: [String: String]) {
        let result = outcome
        message = outcome.message.map {
            Message(
                title: $0.title, message: $0.message, severity: $0.severity.rawValue, code: $0.code.rawValue,
                suggestedAction: $0.suggestedAction, showsRetry: $0.showsRetry)
        }
        delivered = result.report.deliveredCount
        total = result.report.sources.count
        durationSeconds = Self.seconds(result.report.duration)
        sources = result.report.sources.map { report in
            let failure = report.status == .succeeded ? nil : report.classification
            return SourceEntry(
                id: report.id.rawValue, displayName: report.displayName, simulates: descriptions[report.id.rawValue],
                status: report.status.rawValue, items: report.itemCount, attempts: report.attempts,
                durationSeconds: Self.seconds(report.duration),
                breaker: (breakerStates[report.id.rawValue] ?? .closed).rawValue,
                category: failure?.category.rawValue, code: failure?.code.rawValue, httpStatus: failure?.httpStatus)
        }
        jobs = result.items.map {
            Posting(title: $0.title, company: $0.company, location: $0.location, url: $0.url, source: $0.source)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (whole, fraction) = duration.components
        return ((Double(whole) + Double(fraction) / 1e18) * 1_000).rounded() / 1_000
    }
}

/// `GET /health`: the health rules' verdict.
public struct HealthResponse: Codable, Sendable {
    /// One alert.
    public struct Alert: Codable, Sendable {
        /// The rule's id (`error-rate-warning`).
        public var rule: String
        /// `info`, `warning` or `critical`.
        public var severity: String
        /// What it found.
        public var message: String
        /// The keys it concerns.
        public var keys: [String]
    }

    /// `healthy`, or the worst alert's severity.
    public var status: String
    /// The alerts, most urgent first.
    public var alerts: [Alert]

    init(_ report: HealthReport) {
        status = report.isHealthy ? "healthy" : (report.status?.description ?? "healthy")
        alerts = report.alerts.map {
            Alert(rule: $0.rule, severity: $0.severity.description, message: $0.message, keys: $0.keys)
        }
    }
}
