/// Supplies and refreshes the credential an ``AuthenticatingTransport`` attaches.
///
/// ## Contract
/// - ``currentCredential()`` returns the credential to use now (from storage or memory); it may return nil
///   when the user is signed out, and the request goes out without one.
/// - ``refreshCredential(rejected:)`` obtains a new credential (for example with a refresh token). It is
///   called at most once at a time per transport, however many requests were rejected together.
/// - Send the refresh request through a transport that does *not* include the authenticating one (or mark
///   it with ``isRefreshRequest(_:)``), so the refresh itself is never intercepted.
/// - Throw when the session cannot be renewed; every waiting request then fails as `authentication`
///   coded `AUTH_001` (session expired). A failure that is transient and not `authentication` (offline,
///   a timeout, the token endpoint's 503: throw the transport's own error) fails them as that failure instead,
///   so nobody is told to sign in again because the network was down.
/// - A refresh is cancelled only when it outlasts ``AuthenticationConfiguration/refreshTimeout`` (60 s by
///   default). Keep a rotated refresh token as soon as the token endpoint returns it, before anything else
///   that may be cancelled, so a refresh cut off late does not lose it.
public protocol CredentialProvider: Sendable {
    /// The credential to attach now, if any.
    func currentCredential() async throws -> Credential?

    /// A fresh credential replacing `rejected` (the one the server refused or that is about to expire).
    func refreshCredential(rejected: Credential?) async throws -> Credential

    /// True for the provider's own refresh request, which the transport passes through untouched.
    func isRefreshRequest(_ request: HTTPRequest) -> Bool
}

extension CredentialProvider {
    /// No request is the refresh request by default.
    public func isRefreshRequest(_ request: HTTPRequest) -> Bool { false }
}
