import Foundation
import ResilienceTesting
import ResilienceTransport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential provider whose refresh hands out `token-1`, `token-2`, … (or fails), counting refreshes.
///
/// Used only by the loopback `FaultServer` tests in `AuthenticatingTransportTests`: the refresh takes
/// `refreshDelay` of real time so that concurrent requests really do meet their 401s while one refresh is in
/// flight, which is what single-flight refreshing must survive.
final class CountingCredentialProvider: CredentialProvider {
    let initial: Credential?
    let refreshCount = LockedBox(0)
    let failRefresh: Bool
    let refreshDelay: Duration
    let expiry: ResilienceInstant?

    init(
        initial: Credential?, failRefresh: Bool = false, refreshDelay: Duration = .milliseconds(50),
        expiry: ResilienceInstant? = nil
    ) {
        self.initial = initial
        self.failRefresh = failRefresh
        self.refreshDelay = refreshDelay
        self.expiry = expiry
    }

    func currentCredential() async throws -> Credential? { initial }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        let count = refreshCount.mutate { count -> Int in
            count += 1
            return count
        }
        try await Task.sleep(for: refreshDelay)
        if failRefresh { throw URLError(.userAuthenticationRequired) }
        return .bearer("token-\(count)", expiresAt: expiry)
    }

    func isRefreshRequest(_ request: HTTPRequest) -> Bool { request.url.path == "/oauth/token" }
}
