/// Whether repeating a request is safe, and the key that makes it safe if it is not naturally so.
///
/// The retry stage's idempotency guard reads this: a non-idempotent request without a key is retried only
/// when the failure proves nothing was sent (``FailureClassification/requestWasNotSent``).
public struct Idempotency: Hashable, Sendable, CustomStringConvertible {
    /// True when repeating the request has the same effect as sending it once (GET, PUT, DELETE …).
    public var isIdempotent: Bool
    /// A key the server uses to apply the request at most once (`Idempotency-Key` header), if any.
    public var key: String?

    /// Creates a value.
    ///
    /// - Parameters:
    ///   - isIdempotent: True when repeating the request has the same effect as sending it once (GET, PUT, DELETE …).
    ///   - key: A key the server uses to apply the request at most once (`Idempotency-Key` header), if any.
    public init(isIdempotent: Bool, key: String? = nil) {
        self.isIdempotent = isIdempotent
        self.key = key
    }

    /// A naturally idempotent request (the default).
    public static let idempotent = Idempotency(isIdempotent: true)
    /// A request that must not be repeated blindly.
    public static let nonIdempotent = Idempotency(isIdempotent: false)
    /// A non-idempotent request made safe by a server-side idempotency key.
    public static func keyed(_ key: String) -> Idempotency { Idempotency(isIdempotent: false, key: key) }

    /// True when the request may be sent again after a failure that might have reached the server.
    public var isSafeToRepeat: Bool { isIdempotent || key != nil }

    /// `idempotent`, `keyed(…)` or `non-idempotent`.
    public var description: String {
        if isIdempotent { return "idempotent" }
        if let key { return "keyed(\(key))" }
        return "non-idempotent"
    }
}
