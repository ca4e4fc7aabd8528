import ResilienceCore

/// The request-coalescing stage (single flight): concurrent calls with the same key share one run of the
/// stages inside it and the operation, and every caller gets the result (or the error).
///
/// - The key comes from ``keyOf``, which reads the context: by default ``ResilienceContext/key`` and
///   ``ResilienceContext/operation``, for idempotent calls only (a call whose key is `nil` runs on its own).
///   Derive a key that holds everything that can change the answer (the query, the credentials' identity):
///   two calls with equal keys get the same result. Calls of different ``ResilienceContext/priority`` never
///   share a run, whatever their key: the run is admitted, shed and retried at its first caller's priority.
/// - A caller that is cancelled stops waiting at once and throws `CancellationError`; the others keep
///   waiting. The run is cancelled only when every caller has gone. The caller whose call started the run
///   lends it its `next` (which lives on that caller's stack), so that caller returns only once the run has
///   ended, even when it was cancelled earlier.
/// - The run uses the context of the caller that started it (its deadline, its telemetry). A caller stops
///   waiting at its own context's deadline with ``DeadlineExceededError`` (a caller that joined at once; the
///   one that started the run once the run has ended, as above), and the others keep waiting.
/// - A caller that joined a run emits ``ResilienceEventKind/requestCoalesced`` when it gets the run's value or its
///   error (the event then carries the error's classification); one that left first emits nothing.
///
/// Put it outside the retry stage, so that callers share the retries too:
///
/// ```swift
/// let pipeline = Pipeline {
///     CoalescingStrategy()
///     RetryStrategy(policy: StandardRetryPolicy.standard)
///     TimeoutStrategy(.seconds(10))
/// }
/// ```
public struct CoalescingStrategy: ResilienceStrategy {
    /// The calls in flight; share one between stages to coalesce across pipelines.
    public let flights: SingleFlight<String>
    /// The key a call is coalesced under, or `nil` to run it on its own.
    public let keyOf: @Sendable (ResilienceContext) -> String?

    private let keyDescription: String

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - flights: The calls in flight. Default: a table of this stage's own.
    ///   - keyOf: The key a call is coalesced under, or `nil` to run it on its own; `nil` here means
    ///     ``idempotentCallKey(_:)`` (the context's key and operation, for idempotent calls only). Default: `nil`.
    public init(
        flights: SingleFlight<String> = SingleFlight(),
        keyOf: (@Sendable (ResilienceContext) -> String?)? = nil
    ) {
        self.flights = flights
        self.keyOf = keyOf ?? CoalescingStrategy.idempotentCallKey
        keyDescription = keyOf == nil ? "key+operation, idempotent only" : "custom"
    }

    /// `"key operation"` for an idempotent call; `nil` (no coalescing) for any other.
    ///
    /// Every backslash and space in the context's key is escaped with a backslash (`"a\ b c"` for key `"a b"`
    /// and operation `"c"`), so the first unescaped space always ends the key: two calls get the same key
    /// only when both their keys and their operations are equal.
    ///
    /// - Parameter context: The call's context.
    /// - Returns: The key the call is coalesced under, or `nil`.
    @Sendable
    public static func idempotentCallKey(_ context: ResilienceContext) -> String? {
        guard context.idempotency.isIdempotent else { return nil }
        // Scalar by scalar: a space that a combining mark follows is still escaped.
        var key = String.UnicodeScalarView()
        for scalar in context.key.unicodeScalars {
            if scalar == "\\" || scalar == " " { key.append("\\") }
            key.append(scalar)
        }
        return String(key) + " " + context.operation
    }

    /// Runs `next` once for all the concurrent calls with this call's key.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard let key = keyOf(context) else { return try await next(context) }
        let flights = flights
        // Waits for the run; a caller that joined reports it, whether it got the value or the error.
        func share() async throws -> Output {
            let (result, shared) = await flights.borrowingOutcome(key, priority: context.priority) {
                try await next(context)
            }
            if shared { context.emitCoalesced(result, detail: "coalescing") }
            return try result.get()
        }
        guard let deadline = context.deadline else { return try await share() }
        // The run uses the first caller's context, so nothing inside it holds a caller that joined to its own
        // deadline: each caller's wait is raced against it (a wait cut short leaves the run).
        return try await raceAgainstDeadline(until: deadline, clock: context.clock) { try await share() }
    }

    /// `coalescing(key: key+operation, idempotent only)` or `coalescing(key: custom)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "coalescing", settings: [.init("key", keyDescription)])
    }
}
