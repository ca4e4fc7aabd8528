/// Settings of an ``AuthenticatingTransport``.
public struct AuthenticationConfiguration: Sendable, Hashable {
    /// Refresh before sending when the credential expires within this window (default 30 s), but never
    /// earlier than halfway through the lifetime a refreshed credential had when it arrived: a credential
    /// living no longer than twice this window is refreshed once half its life is over, so one that lives
    /// 20 s is not "about to expire" from the start (the provider's first credential, whose age is unknown,
    /// gets the whole window).
    public var proactiveRefreshSkew: Duration = .seconds(30)
    /// At most this many counted refreshes within ``refreshWindow`` (default 5) …
    ///
    /// The renewal of a credential that served (the server answered a request sent with it, without refusing
    /// it, before it expired) is never counted nor refused: each credential earns one, when it comes due. Every
    /// other refresh counts: after a rejection, replacing a credential that never served (it arrived expired, or
    /// was refused), or a second attempt after a renewal failed. So a healthy short-lived token is renewed at
    /// its own pace, and only refreshes that do not pay off are limited.
    public var maximumRefreshes: Int = 5
    /// … per this window on the injected clock (default 30 s). Beyond it a credential that is due for a
    /// refresh but still valid is sent as it is (the refresh is put off), and a request whose credential has
    /// expired, or was refused by the server, fails with `AUTH_004` (refresh limit reached). A window of zero or
    /// less holds no refresh, so it lifts the limit: each request still gets at most one refresh after a
    /// rejection.
    public var refreshWindow: Duration = .seconds(30)
    /// The longest one refresh may take on the context's clock (default 60 s, URLSession's request timeout);
    /// `nil` leaves it to the provider's own bounds.
    ///
    /// A refresh still running then is cancelled, and the requests waiting for it fail as a transient timeout
    /// (`NET_002`, not a sign-out): a token endpoint that stops answering holds up requests for at most this
    /// long, and the next request that needs a credential starts a new refresh. Without the bound, a provider
    /// whose refresh never returns (an HTTP client with no read timeout against a stalled endpoint) would keep
    /// every later request waiting on it for the life of the process. Zero or less leaves no time: every
    /// refresh fails at once.
    public var refreshTimeout: Duration? = .seconds(60)
    /// The statuses that mean "credential rejected" (default 401), unless the response's headers say the quota
    /// is spent (then it is a rate limit, returned without a refresh).
    public var rejectionStatuses: Set<Int> = [401]

    /// The defaults.
    public init() {}

    /// 30 s skew, 5 counted refreshes per 30 s, a refresh bounded at 60 s, 401 only.
    public static let standard = AuthenticationConfiguration()
}
