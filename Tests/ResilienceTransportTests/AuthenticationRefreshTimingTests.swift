import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// A token service on the manual clock, both ends of it: the provider's first credential and each refresh's
/// live `lifetime` from the moment they are handed out, and the API answers 200 to a token it issued until that
/// token expires, 401 otherwise. Records when each refresh happened, as an offset from the start.
private final class ExpiringTokenService: CredentialProvider, HTTPTransport, Sendable {
    let clock: ResilienceClock
    let start: ResilienceInstant
    let lifetime: Duration
    let expiries = LockedBox([String: ResilienceInstant]())
    let refreshTimes = LockedBox([Duration]())
    let sent = LockedBox(0)

    init(clock: ResilienceClock, lifetime: Duration) {
        self.clock = clock
        self.start = clock.now()
        self.lifetime = lifetime
    }

    func currentCredential() async throws -> Credential? { issue("token-0") }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        let count = refreshTimes.mutate { times -> Int in
            times.append(start.duration(to: clock.now()))
            return times.count
        }
        return issue("token-\(count)")
    }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        sent.mutate { $0 += 1 }
        let header = request.headers["Authorization"] ?? ""
        let token = header.hasPrefix("Bearer ") ? String(header.dropFirst("Bearer ".count)) : ""
        guard let expiry = expiries.value[token], clock.now() < expiry else { return HTTPResponse(status: 401) }
        return HTTPResponse(status: 200)
    }

    private func issue(_ token: String) -> Credential {
        let expiry = clock.now().advanced(by: lifetime)
        expiries.mutate { $0[token] = expiry }
        return .bearer(token, expiresAt: expiry)
    }
}

/// A server answering every request with `status`, counting them.
private final class FixedStatusServer: HTTPTransport, Sendable {
    let status: Int
    let received = LockedBox(0)

    init(status: Int) { self.status = status }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        received.mutate { $0 += 1 }
        return HTTPResponse(status: status)
    }
}

@Suite("AuthenticatingTransport: when a credential is refreshed, and the refresh limit (ManualClock)")
struct AuthenticationRefreshTimingTests {
    static let request = HTTPRequest(url: URL(string: "https://api.example.com/me")!)

    /// Sends one request a second for `seconds` seconds on `manual`; returns the codes of the failures.
    private static func sendEverySecond(
        for seconds: Int, through transport: AuthenticatingTransport, manual: ManualClock
    ) async -> [FailureCode] {
        let clock = ResilienceClock.manual(manual)
        var failures: [FailureCode] = []
        for _ in 0..<seconds {
            do {
                let response = try await transport.send(request, context: ResilienceContext(key: "auth", clock: clock))
                if response.status != 200 { failures.append(FailureCode("HTTP_\(response.status)")) }
            } catch {
                failures.append(classify(error)?.code ?? .unknown)
            }
            manual.advance(by: .seconds(1))
        }
        return failures
    }

    @Test(
        "A credential living no longer than the 30 s skew is refreshed halfway through its life, never AUTH_004",
        arguments: [12, 20, 30])
    func shortLivedCredential(lifetime: Int) async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(lifetime))
        let transport = AuthenticatingTransport(wrapping: tokens, provider: tokens)
        let failures = await Self.sendEverySecond(for: 300, through: transport, manual: manual)
        #expect(failures.isEmpty, "\(failures.count) requests failed: \(Set(failures))")
        #expect(tokens.sent.value == 300)
        // The provider's first credential has an unknown age and expires within the skew: refreshed at once.
        // Every later one lives `lifetime` from its refresh and is refreshed when half of that is over.
        #expect(tokens.refreshTimes.value == stride(from: 0, to: 300, by: lifetime / 2).map { .seconds($0) })
    }

    @Test(
        "A credential living at least twice the skew is still refreshed 30 s before it expires",
        arguments: [(60, Array(stride(from: 30, to: 300, by: 30))), (120, [90, 180, 270]), (3_600, [])])
    func longLivedCredential(lifetime: Int, refreshedAt: [Int]) async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(lifetime))
        let transport = AuthenticatingTransport(wrapping: tokens, provider: tokens)
        let failures = await Self.sendEverySecond(for: 300, through: transport, manual: manual)
        #expect(failures.isEmpty, "\(failures.count) requests failed: \(Set(failures))")
        #expect(tokens.refreshTimes.value == refreshedAt.map { .seconds($0) })
    }

    @Test("The refresh limit reached before sending says the request was not sent")
    func limitBeforeSending() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        // Every credential has expired when it arrives, so each request refreshes before sending.
        let tokens = ExpiringTokenService(clock: clock, lifetime: .zero)
        let server = FixedStatusServer(status: 200)
        let transport = AuthenticatingTransport(wrapping: server, provider: tokens)
        let context = ResilienceContext(key: "auth", clock: clock)
        for _ in 0..<5 { #expect(try await transport.send(Self.request, context: context).status == 200) }
        let limited = classify(
            await #expect(throws: (any Error).self) { try await transport.send(Self.request, context: context) })
        #expect(server.received.value == 5)
        #expect(tokens.refreshTimes.value.count == 5)
        #expect(limited?.code == .refreshLimitReached)
        #expect(limited?.requestWasNotSent == true)
        #expect(limited?.httpStatus == nil)
        #expect(limited?.message?.contains("the request was not sent") == true, "\(String(describing: limited))")
    }

    @Test("The refresh limit reached after a 401 says the request was sent and refused, with the status")
    func limitAfterRejection() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let tokens = ExpiringTokenService(clock: clock, lifetime: .seconds(3_600))
        let server = FixedStatusServer(status: 401)
        let transport = AuthenticatingTransport(wrapping: server, provider: tokens)
        let context = ResilienceContext(key: "auth", clock: clock)
        // Each 401 refreshes once and replays once; the replay's 401 is returned.
        for _ in 0..<5 { #expect(try await transport.send(Self.request, context: context).status == 401) }
        let limited = classify(
            await #expect(throws: (any Error).self) { try await transport.send(Self.request, context: context) })
        #expect(server.received.value == 11)
        #expect(tokens.refreshTimes.value.count == 5)
        #expect(limited?.code == .refreshLimitReached)
        #expect(limited?.requestWasNotSent == false)
        #expect(limited?.httpStatus == 401)
        let message = limited?.message ?? ""
        #expect(!message.contains("the request was not sent"), "\(message)")
        #expect(message.contains("the request was sent") && message.contains("HTTP 401"), "\(message)")
    }
}
