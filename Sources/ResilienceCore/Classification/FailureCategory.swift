/// What kind of failure happened, at the granularity that policies and presenters decide on.
///
/// An open set: a struct with static members rather than an enum, so a third party can add a category
/// (`extension FailureCategory { static let quotaExceeded = FailureCategory("quota-exceeded") }`) without a
/// breaking change. Switch over it with `case .rateLimited:` patterns and a `default:`.
public struct FailureCategory: OpenVocabulary {
    /// The stable identifier, used in logs, metrics and persisted state.
    public let rawValue: String

    /// Creates a category from its identifier.
    ///
    /// - Parameter rawValue: The identifier, in kebab-case like the predefined categories (`"network-unreachable"`);
    ///   used in logs, metrics and persisted state.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A short-lived fault worth retrying soon (connection reset, 502, DNS hiccup).
    public static let transient = FailureCategory("transient")
    /// The request took too long (attempt timeout, 408, 504). Retried with linear backoff by default.
    public static let timeout = FailureCategory("timeout")
    /// The server asked us to slow down (429). Retried after the server's hint or a long backoff.
    public static let rateLimited = FailureCategory("rate-limited")
    /// The server failed (500, 503 …). Retried with exponential backoff.
    public static let serverError = FailureCategory("server-error")
    /// The request is wrong (400, 422, 501 …). Never retried.
    public static let clientError = FailureCategory("client-error")
    /// The resource does not exist (404). Never retried; a source may treat it as an empty result.
    public static let notFound = FailureCategory("not-found")
    /// Credentials are missing, invalid or expired (401, 403). Never retried by the retry stage.
    public static let authentication = FailureCategory("authentication")
    /// The device is offline or the host cannot be reached.
    public static let networkUnreachable = FailureCategory("network-unreachable")
    /// A plaintext request was blocked (App Transport Security or the secure-transport policy).
    public static let insecureTransport = FailureCategory("insecure-transport")
    /// The response could not be understood (malformed body, truncated transfer, TLS failure, garbage).
    public static let invalidResponse = FailureCategory("invalid-response")
    /// The server already has this entity (409). Sync treats it as applied.
    public static let conflict = FailureCategory("conflict")
    /// The caller cancelled. Never retried and never counted as a failure.
    public static let cancelled = FailureCategory("cancelled")
    /// A circuit breaker rejected the call without sending it. Never retried.
    public static let circuitOpen = FailureCategory("circuit-open")
    /// A local limiter (token bucket, bulkhead, adaptive throttle, retry budget) rejected the call.
    public static let throttled = FailureCategory("throttled")
    /// Local storage failed (disk full, corrupted file, constraint violation).
    public static let storage = FailureCategory("storage")
    /// Nobody recognised the error.
    public static let unknown = FailureCategory("unknown")
}
