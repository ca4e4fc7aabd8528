import Foundation
import ResilienceTesting
import ResilienceTransport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test-only retry pipeline (the real ones live in ResiliencePolicies, built in parallel): up to
/// `maximumAttempts` attempts, each with its own deadline on the context's clock, retrying transient
/// failures that are safe to repeat, never cancellation. No backoff: tests run against FaultServer.
struct TestOnlyRetryPipeline: ResiliencePipeline {
    var maximumAttempts = 3
    var attemptTimeout: Duration? = nil
    let attempts = LockedBox(0)

    func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var attempt = 1
        while true {
            var attemptContext = context
            attemptContext.attempt = attempt
            if let attemptTimeout {
                attemptContext.narrowDeadline(to: context.clock.now().advanced(by: attemptTimeout))
            }
            attempts.mutate { $0 += 1 }
            do {
                return try await operation(attemptContext)
            } catch {
                let classification = context.classify(error)
                let repeatable = context.idempotency.isSafeToRepeat || classification.requestWasNotSent
                guard attempt < maximumAttempts, classification.category != .cancelled, classification.isTransient,
                    repeatable, !Task.isCancelled
                else { throw error }
                attempt += 1
            }
        }
    }

    var stages: [StageDescription] { [] }
}

/// Collects telemetry events.
final class RecordingSink: TelemetrySink {
    let events = LockedBox<[ResilienceEvent]>([])
    func receive(_ event: ResilienceEvent) { events.mutate { $0.append(event) } }
    func kinds() -> [ResilienceEventKind] { events.value.map(\.kind) }
}

/// A credential provider whose refresh hands out `token-1`, `token-2`, … (or fails), counting refreshes.
final class CountingCredentialProvider: CredentialProvider {
    let initial: Credential?
    let refreshCount = LockedBox(0)
    let failRefresh: Bool
    let refreshDelay: Duration
    let expiry: ResilienceInstant?

    init(
        initial: Credential?, failRefresh: Bool = false, refreshDelay: Duration = .milliseconds(50),
        expiry: ResilienceInstant? = nil
    ) {
        self.initial = initial
        self.failRefresh = failRefresh
        self.refreshDelay = refreshDelay
        self.expiry = expiry
    }

    func currentCredential() async throws -> Credential? { initial }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        let count = refreshCount.mutate { count -> Int in
            count += 1
            return count
        }
        try await Task.sleep(for: refreshDelay)
        if failRefresh { throw URLError(.userAuthenticationRequired) }
        return .bearer("token-\(count)", expiresAt: expiry)
    }

    func isRefreshRequest(_ request: HTTPRequest) -> Bool { request.url.path == "/oauth/token" }
}

/// Runs `body` and returns the error it threw (nil if none).
func thrownError<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// The classification of an error the way a pipeline would see it.
func classify(_ error: (any Error)?) -> FailureClassification? {
    guard let error else { return nil }
    return CompositeErrorClassifier([TransportErrorClassifier.standard]).classification(of: error)
}

/// A context on the real continuous clock with an attempt deadline `timeout` from now.
func realContext(timeout: Duration = .seconds(10), telemetry: (any TelemetrySink)? = nil) -> ResilienceContext {
    let clock = ResilienceClock.continuous
    return ResilienceContext(
        key: "test", deadline: clock.now().advanced(by: timeout), telemetry: telemetry, clock: clock,
        classifier: TransportErrorClassifier.standard)
}

/// Shared transport for the FaultServer suites (one long-lived session, as in production).
let sharedTransport = URLSessionTransport()
