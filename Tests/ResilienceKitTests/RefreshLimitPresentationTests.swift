import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// A provider whose every credential expires at `expiresAt` (never when `nil`).
private struct FixedExpiryProvider: CredentialProvider {
    let expiresAt: ResilienceInstant?

    func currentCredential() async throws -> Credential? { .bearer("token", expiresAt: expiresAt) }
    func refreshCredential(rejected: Credential?) async throws -> Credential { .bearer("token", expiresAt: expiresAt) }
}

/// A server answering every request with `status`.
private struct FixedStatusServer: HTTPTransport {
    let status: Int

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        HTTPResponse(status: status)
    }
}

/// What the person and the developer are told when the refresh limit (`AUTH_004`) stops a request: before it
/// was sent, or after the server refused its credential. ManualClock; no network.
@Suite("Refresh limit reached: what is presented (ManualClock)")
struct RefreshLimitPresentationTests {
    /// The classification of the request that the refresh limit stops, after `maximumRefreshes` requests that
    /// each refreshed once.
    fileprivate static func limited(
        _ provider: FixedExpiryProvider, _ server: FixedStatusServer, clock: ResilienceClock
    ) async -> FailureClassification? {
        let transport = AuthenticatingTransport(wrapping: server, provider: provider)
        let context = ResilienceContext(key: "auth", clock: clock, classifier: TransportErrorClassifier.standard)
        let request = HTTPRequest(url: URL(string: "https://api.example.com/me")!)
        for _ in 0..<AuthenticationConfiguration.standard.maximumRefreshes {
            _ = try? await transport.send(request, context: context)
        }
        do {
            _ = try await transport.send(request, context: context)
            return nil
        } catch {
            return context.classify(error)
        }
    }

    @Test("Stopped before sending: the details say the request was not sent, and carry no status")
    func beforeSending() async throws {
        let clock = ResilienceClock.manual(ManualClock())
        // Every credential has already expired when it arrives, so each request refreshes before sending.
        let failure = try #require(
            await Self.limited(
                FixedExpiryProvider(expiresAt: clock.now()), FixedStatusServer(status: 200), clock: clock))
        #expect(failure.code == .refreshLimitReached)
        let shown = DefaultErrorPresenter().present(failure, context: PresentationContext())
        #expect(shown.title == PresentationStrings.english.string("sessionExpired.title"))
        let details = shown.technicalDetails ?? ""
        #expect(details.contains("the request was not sent"), "\(details)")
        #expect(!details.contains("HTTP 401"), "\(details)")
    }

    @Test("Stopped after a 401: the details say the request was sent and refused with 401, never 'not sent'")
    func afterRejection() async throws {
        let failure = try #require(
            await Self.limited(
                FixedExpiryProvider(expiresAt: nil), FixedStatusServer(status: 401), clock: .manual(ManualClock())))
        #expect(failure.code == .refreshLimitReached)
        let shown = DefaultErrorPresenter().present(failure, context: PresentationContext())
        #expect(shown.title == PresentationStrings.english.string("sessionExpired.title"))
        let details = shown.technicalDetails ?? ""
        #expect(details.contains("HTTP 401"), "\(details)")
        #expect(details.contains("the request was sent"), "\(details)")
        #expect(!details.contains("the request was not sent"), "\(details)")
    }
}
