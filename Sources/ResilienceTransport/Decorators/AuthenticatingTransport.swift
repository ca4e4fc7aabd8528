/// Attaches a credential to every request; on a rejection (401) refreshes it once and replays the request
/// once.
///
/// A rejection whose headers say the quota is spent (`Retry-After`, a remaining count of zero:
/// `HTTPStatusTable.quotaIsSpent(_:)`) is a rate limit, not a refused credential: it is returned as it is,
/// without a refresh or a replay, and classified `rateLimited` with the server's wait as its retry hint.
///
/// Refreshes are single-flight: N requests rejected together cause exactly one refresh and all N replay with
/// the new credential. A failed refresh fails all of them as `authentication` coded `AUTH_001`, unless it
/// failed transiently (the token endpoint could not be reached: offline, a timeout, its 503), which says
/// nothing about the session: then they fail as that failure (a ``TransportError``), which the pipeline may
/// retry. A credential that the server accepted before it expired is renewed when it comes due, however short
/// its life, and that renewal is never limited; every other refresh (after a rejection, replacing a credential
/// that never served, retrying a failed renewal) counts against the limit of
/// ``AuthenticationConfiguration/maximumRefreshes`` per ``AuthenticationConfiguration/refreshWindow`` on the
/// context's clock. A refresh before sending that the limit refuses while the credential is still valid is put
/// off: the request is sent with that credential.
/// Beyond the limit, a request whose credential has expired, or that the server refused, fails with
/// `AUTH_004` (``AuthenticationFailure/refreshLimitReached(limit:window:afterRejectionStatus:)``), which says
/// whether it was stopped before sending (marked not sent) or after the server refused its credential (sent,
/// with that status, and not sent again). A credential is refreshed before sending when it expires within
/// ``AuthenticationConfiguration/proactiveRefreshSkew`` or, for one a refresh obtained, within half its
/// lifetime as known then (its expiry minus the instant it arrived), whichever is shorter: a 20 s token is
/// refreshed 10 s before it expires, not before every request, and a token living at least twice the skew
/// keeps the whole skew.
/// The provider's own refresh request (``CredentialProvider/isRefreshRequest(_:)``) passes through untouched.
/// A redirect that leaves the request's origin never carries the credential, whatever its header's name: while the
/// wrapped transport sends, that name is in ``Credential/headersInEffect``, which ``RedirectPolicy`` strips with
/// the transport's own credential headers.
/// The refresh runs in a task of its own and each request's wait for it is its own: a request cancelled
/// meanwhile leaves at once with `CancellationError`, and one whose `context.deadline` passes first fails with
/// ``TransportError/timedOut(after:url:)`` (`NET_002`), while the others go on waiting for the same refresh.
/// Emits ``ResilienceEventKind/credentialRefreshed``.
public struct AuthenticatingTransport: HTTPTransport {
    /// The wrapped transport.
    public let base: any HTTPTransport
    /// The settings.
    public let configuration: AuthenticationConfiguration
    private let provider: any CredentialProvider
    private let refresher: CredentialRefresher

    /// Wraps `base`, attaching `provider`'s credentials.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport.
    ///   - provider: Supplies the credential for each request and a fresh one when the server refuses it or it is about
    ///     to expire.
    ///   - configuration: The proactive refresh skew, the refresh limit per window and the statuses that mean
    ///     "credential refused". Default: `.standard`.
    public init(
        wrapping base: any HTTPTransport, provider: any CredentialProvider,
        configuration: AuthenticationConfiguration = .standard
    ) {
        self.base = base
        self.provider = provider
        self.configuration = configuration
        self.refresher = CredentialRefresher(provider: provider, configuration: configuration)
    }

    /// Sends with the credential, refreshing and replaying once on rejection.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        if provider.isRefreshRequest(request) { return try await base.send(request, context: context) }
        var snapshot = try await refresher.current()
        if snapshot.isDueForRefresh(skew: configuration.proactiveRefreshSkew, now: context.clock.now()) {
            snapshot = try await refresher.refreshed(after: snapshot.generation, context: context)
        }
        let response = try await send(request, with: snapshot.credential, context: context)
        guard configuration.rejectionStatuses.contains(response.status) else {
            refresher.served(snapshot, context: context)
            return response
        }
        // A rejection whose headers say the quota is spent is a rate limit (the status table's reading), not a
        // refused credential: returned as it is, so nothing is refreshed or sent again before the server's time.
        guard !HTTPStatusTable.quotaIsSpent(response.headers) else { return response }
        try Task.checkCancellation()
        let renewed = try await refresher.refreshed(
            after: snapshot.generation, rejectionStatus: response.status, context: context)
        let replayed = try await send(request, with: renewed.credential, context: context)
        if !configuration.rejectionStatuses.contains(replayed.status) { refresher.served(renewed, context: context) }
        return replayed
    }

    /// Sends `request` with `credential` attached, its header named in ``Credential/headersInEffect`` while the
    /// wrapped transport sends: the redirects that transport follows drop it once they leave the origin, whatever
    /// its name.
    private func send(
        _ request: HTTPRequest, with credential: Credential?, context: ResilienceContext
    ) async throws -> HTTPResponse {
        guard let credential else { return try await base.send(request, context: context) }
        return try await Credential.$attachedHeaders.withValue(
            Credential.attachedHeaders.union([credential.headerName])
        ) {
            try await base.send(Self.attach(credential, to: request), context: context)
        }
    }

    static func attach(_ credential: Credential?, to request: HTTPRequest) -> HTTPRequest {
        guard let credential else { return request }
        var request = request
        request.headers[credential.headerName] = credential.headerValue
        return request
    }
}
