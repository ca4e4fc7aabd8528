/// One stage around an async operation: retry, breaker, limiter, timeout, fallback, hedging, telemetry.
///
/// ## Contract
/// - Call `next` zero or more times (a breaker that rejects calls it zero times; retry and hedging more than
///   once), each time with a context derived from the one given (e.g. a new `attempt`, a narrower
///   `deadline`).
/// - Never swallow cancellation: if the task is cancelled, rethrow `CancellationError` (or the operation's
///   cancellation error) and do not count it as a failure.
/// - Do the success path without allocating and without suspending except inside `next`.
/// - Emit events through ``ResilienceContext/emit(_:_:)``; never block on a sink.
/// - Describe yourself in ``stageDescription`` (name and settings) for debugging.
public protocol ResilienceStrategy: Sendable {
    /// Runs `next` under this stage's policy.
    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output

    /// This stage's name and settings.
    var stageDescription: StageDescription { get }
}

/// A stage's name and settings, for a pipeline's self-description.
public struct StageDescription: Hashable, Sendable, CustomStringConvertible {
    /// The stage's name (`"retry"`, `"circuit-breaker"`).
    public var name: String
    /// Its settings as ordered key/value pairs (`("maxAttempts", "3")`).
    public var settings: [Setting]

    /// One named setting.
    public struct Setting: Hashable, Sendable {
        /// The setting's name.
        public var name: String
        /// Its value, rendered for humans.
        public var value: String
        /// Creates a setting.
        ///
        /// - Parameters:
        ///   - name: The setting's name (`"maxAttempts"`).
        ///   - value: Its value, rendered for humans (`"3"`, `"30 s"`).
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a description.
    ///
    /// - Parameters:
    ///   - name: The setting's name.
    ///   - settings: Its settings as ordered key/value pairs (`("maxAttempts", "3")`). Default: `[]`.
    public init(name: String, settings: [Setting] = []) {
        self.name = name
        self.settings = settings
    }

    /// The name of a circuit-breaker stage's description (`circuit-breaker`), by which a pipeline is known
    /// to have a breaker.
    public static let circuitBreakerName = "circuit-breaker"

    /// The name of a wait-for-connectivity stage's description (`wait-for-connectivity`), by which a pipeline
    /// is known to hold its calls while the device is offline.
    public static let connectivityWaitName = "wait-for-connectivity"

    /// `retry(maxAttempts: 3, backoff: exponential)`.
    public var description: String {
        if settings.isEmpty { return name }
        return "\(name)(" + settings.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + ")"
    }
}
