/// What ``CompositionRoot/fetch(_:)`` returns: the items, what happened to each source, and the one message
/// to show, decided by the configured ``ErrorPresenter`` from the full report.
///
/// A fetch that could not meet its ``CompletionPolicy`` is an outcome too (``metPolicy`` is `false`, no
/// items), presented by the same presenter: a caller never has to turn an ``AggregationError`` into words.
public struct FetchOutcome<Item: Sendable>: Sendable {
    /// The merged items; empty when the completion policy was not met.
    public var items: [Item]
    /// What happened to each source.
    public var report: AggregateReport
    /// The message to show, or `nil` when every source delivered live items.
    public var message: UserFacingError?
    /// Whether the completion policy was met.
    public var metPolicy: Bool

    /// Creates an outcome.
    ///
    /// - Parameters:
    ///   - items: The merged items.
    ///   - report: What happened to each source.
    ///   - message: The message to show, if any.
    ///   - metPolicy: Whether the completion policy was met.
    public init(items: [Item], report: AggregateReport, message: UserFacingError?, metPolicy: Bool) {
        self.items = items
        self.report = report
        self.message = message
        self.metPolicy = metPolicy
    }
}

/// One step of ``CompositionRoot/progress(for:)``.
public enum FetchProgress<Item: Sendable>: Sendable {
    /// A source finished (`completed` of `total`).
    case sourceCompleted(SourceReport, completed: Int, total: Int)
    /// The fetch finished, presented.
    case finished(FetchOutcome<Item>)
}

extension CompositionRoot {
    /// Fetches from every registered source, each through its own pipeline, and presents the outcome:
    /// items, per-source reports and one message together. A fetch that misses its completion policy is
    /// returned (presented), not thrown; only cancellation throws.
    ///
    /// - Parameter query: What to fetch.
    public func fetch(_ query: SourceQuery = SourceQuery()) async throws -> FetchOutcome<Item> {
        do {
            return outcome(of: try await makeAggregator().fetch(query))
        } catch let failure as AggregationError {
            return outcome(of: failure)
        }
    }

    /// The fetch as an `AsyncSequence`: one element per finished source, then the presented outcome. Ending
    /// the iteration early cancels the fetch.
    ///
    /// - Parameter query: What to fetch.
    public func progress(for query: SourceQuery = SourceQuery()) -> AsyncThrowingStream<FetchProgress<Item>, any Error>
    {
        let steps = makeAggregator().progress(for: query)
        let root = self
        let (stream, continuation) = AsyncThrowingStream<FetchProgress<Item>, any Error>.makeStream()
        let task = Task {
            do {
                for try await step in steps {
                    switch step {
                    case .sourceCompleted(let report, let completed, let total):
                        continuation.yield(.sourceCompleted(report, completed: completed, total: total))
                    case .finished(let result):
                        continuation.yield(.finished(root.outcome(of: result)))
                    }
                }
                continuation.finish()
            } catch let failure as AggregationError {
                continuation.yield(.finished(root.outcome(of: failure)))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// A finished fetch, presented.
    public func outcome(of result: AggregateResult<Item>) -> FetchOutcome<Item> {
        FetchOutcome(items: result.items, report: result.report, message: present(result), metPolicy: true)
    }

    /// A fetch that missed its completion policy, presented.
    public func outcome(of failure: AggregationError) -> FetchOutcome<Item> {
        FetchOutcome(
            items: [], report: failure.report,
            message: configuration.presenter.present(failure.classification, context: failure.presentationContext),
            metPolicy: false)
    }
}
