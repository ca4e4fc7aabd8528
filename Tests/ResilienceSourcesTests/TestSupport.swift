import Foundation
import ResilienceSources
import ResilienceTesting

/// Retries every non-cancellation failure up to `maxAttempts`, setting `attempt`: a stand-in for the Policies
/// module's retry stage.
struct RetryingPipeline: ResiliencePipeline {
    var maxAttempts: Int

    func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var attemptContext = context
        while true {
            do {
                return try await operation(attemptContext)
            } catch {
                if context.classify(error).category == .cancelled || attemptContext.attempt >= maxAttempts {
                    throw error
                }
                attemptContext.attempt += 1
            }
        }
    }

    var stages: [StageDescription] {
        [StageDescription(name: "retry", settings: [.init("maxAttempts", "\(maxAttempts)")])]
    }
}

/// A breaker stand-in that is always open: rejects without calling the operation.
struct OpenBreakerPipeline: ResiliencePipeline {
    func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        throw ResilienceError(.circuitOpen, key: context.key, retryAfter: .seconds(30))
    }

    var stages: [StageDescription] { [StageDescription(name: "circuit-breaker")] }
}

/// A source that tracks how many fetches run at once, sleeping `delay` on the clock.
final class ConcurrencyProbeSource: Source {
    let id: SourceID
    let kind: SourceKind = "probe"
    var displayName: String { id.rawValue }
    let delay: Duration
    let clock: ResilienceClock
    let tracker: LockedBox<(current: Int, maximum: Int)>

    init(id: SourceID, delay: Duration, clock: ResilienceClock, tracker: LockedBox<(current: Int, maximum: Int)>) {
        self.id = id
        self.delay = delay
        self.clock = clock
        self.tracker = tracker
    }

    func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [String] {
        tracker.mutate { state in
            state.current += 1
            state.maximum = max(state.maximum, state.current)
        }
        defer { tracker.mutate { $0.current -= 1 } }
        if delay > .zero { try await clock.sleep(for: delay) } else { await Task.yield() }
        return [id.rawValue]
    }
}

/// A source that waits on the clock and, when cancelled, throws an error of its own (a network-unreachable
/// failure) instead of the cancellation, as a source wrapping every error of its client would.
struct CancellationWrappingSource: Source {
    let id: SourceID
    var kind: SourceKind { "wrapping" }
    var displayName: String { id.rawValue }
    let clock: ResilienceClock

    func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [String] {
        do {
            try await clock.sleep(for: .seconds(60))
        } catch {
            throw TestFailure(category: .networkUnreachable)
        }
        return [id.rawValue]
    }
}
