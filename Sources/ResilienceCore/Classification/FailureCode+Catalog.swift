// The built-in codes. Prefixes: NET network, AUTH credentials, RES resilience stages, PARSE response
// content, DB local storage, UNK unknown. NET_001…NET_005 keep the meanings the seeds gave them.
extension FailureCode {
    /// No network connection.
    public static let noConnection = FailureCode("NET_001")
    /// The request timed out.
    public static let timedOut = FailureCode("NET_002")
    /// The server's response was invalid (unexpected status or unreadable body).
    public static let invalidResponse = FailureCode("NET_003")
    /// The server rate-limited the request (429).
    public static let rateLimited = FailureCode("NET_004")
    /// The server's certificate or the TLS handshake failed.
    public static let certificateInvalid = FailureCode("NET_005")
    /// The host name could not be resolved.
    public static let hostNotFound = FailureCode("NET_006")
    /// The server refused the connection.
    public static let connectionRefused = FailureCode("NET_007")
    /// The connection was reset or lost mid-request.
    public static let connectionReset = FailureCode("NET_008")
    /// The server closed the connection without a response.
    public static let emptyReply = FailureCode("NET_009")
    /// A plaintext (http://) request was blocked.
    public static let insecureTransportBlocked = FailureCode("NET_010")
    /// The response body exceeded the configured size limit.
    public static let responseTooLarge = FailureCode("NET_011")
    /// Too many redirects, or a redirect loop.
    public static let tooManyRedirects = FailureCode("NET_012")
    /// The body ended before its declared length.
    public static let truncatedResponse = FailureCode("NET_013")
    /// The server is unavailable (5xx).
    public static let serverUnavailable = FailureCode("NET_014")

    /// The session expired and could not be refreshed.
    public static let sessionExpired = FailureCode("AUTH_001")
    /// The credentials were rejected (401).
    public static let unauthorized = FailureCode("AUTH_002")
    /// The credentials lack permission (403).
    public static let forbidden = FailureCode("AUTH_003")
    /// Credential refreshes were attempted too often and were stopped.
    public static let refreshLimitReached = FailureCode("AUTH_004")

    /// A circuit breaker is open.
    public static let circuitOpen = FailureCode("RES_001")
    /// A local rate limiter rejected the call.
    public static let rateLimitedLocally = FailureCode("RES_002")
    /// The retry budget for this key is spent.
    public static let retryBudgetExhausted = FailureCode("RES_003")
    /// The bulkhead's slots and queue are full.
    public static let bulkheadFull = FailureCode("RES_004")
    /// One attempt exceeded its timeout.
    public static let attemptTimedOut = FailureCode("RES_005")
    /// The whole operation exceeded its total deadline.
    public static let deadlineExceeded = FailureCode("RES_006")
    /// The caller cancelled the operation.
    public static let cancelled = FailureCode("RES_007")
    /// Every fallback alternative failed.
    public static let fallbackExhausted = FailureCode("RES_008")
    /// An adaptive throttle rejected the call client-side.
    public static let throttledAdaptively = FailureCode("RES_009")

    /// The content had the wrong format.
    public static let invalidFormat = FailureCode("PARSE_001")
    /// A feed (RSS/Atom) was malformed.
    public static let malformedFeed = FailureCode("PARSE_002")
    /// The body could not be decoded into the expected type.
    public static let decodingFailed = FailureCode("PARSE_003")

    /// The database could not be opened, read or written (a missing directory, permissions, a read-only file, an
    /// I/O error), or the store was closed.
    public static let storageConnectionFailed = FailureCode("DB_001")
    /// A schema migration failed.
    public static let migrationFailed = FailureCode("DB_002")
    /// A constraint was violated.
    public static let constraintViolation = FailureCode("DB_003")
    /// The stored data is corrupted.
    public static let corruptedData = FailureCode("DB_004")
    /// The disk is full.
    public static let diskFull = FailureCode("DB_005")
    /// The database stayed busy past its timeout.
    public static let storageBusy = FailureCode("DB_006")
    /// The database file was removed, moved or replaced while it was open and could not be written back.
    public static let storageFileMoved = FailureCode("DB_007")

    /// An error nobody classified.
    public static let unknown = FailureCode("UNK_001")
}
