import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// A token service on the manual clock, both ends of it: the provider's first credential and each refresh's
/// live `lifetime` from the moment they are handed out, and the API answers 200 to a token it issued until that
/// token expires (or is revoked), 401 otherwise. Records when each refresh happened, as an offset from the
/// start.
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

    /// Whether the newest credential handed out (the one the transport holds) has not expired yet.
    var newestIsValid: Bool {
        let newest = "token-\(refreshTimes.value.count)"
        return expiries.value[newest].map { clock.now() < $0 } ?? false
    }

    /// From now on the API answers 401 to every token issued so far, expired or not.
    func revokeAll() { expiries.mutate { $0.removeAll() } }

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

    /// Sends one request a second for `seconds` seconds on `manual`; returns each failure's classification and
    /// whether the credential the transport held (the newest `tokens` handed out) was still valid then.
    private static func sendEverySecond(
        for seconds: Int, through transport: AuthenticatingTransport, tokens: ExpiringTokenService,
        manual: ManualClock
    ) async -> [(FailureClassification?, credentialWasValid: Bool)] {
        let clock = ResilienceClock.manual(manual)
        var failures: [(FailureClassification?, credentialWasValid: Bool)] = []
        for _ in 0..<seconds {
            let wasValid = tokens.newestIsValid
            do {
                let response = try await transport.send(request, context: ResilienceContext(key: "auth", clock: clock))
                if response.status != 200 { failures.append((nil, wasValid)) }
            } catch {
                failures.append((classify(error), wasValid))
            }
            manual.advance(by: .seconds(1))
        }
        return failures
    }

    /// The largest number of `times` within any `window` (a refresh at `t` counts until `t + window`, as the
    /// limit counts it).
    private static func mostWithinAnyWindow(_ times: [Duration], window: Duration) -> Int {
        times.map { end in times.filter { $0 <= end && end - $0 < window }.count }.max() ?? 0
    }

    @Test(
        "A credential living at least 2 × window / (limit + 1) is never failed by the refresh limit",
        arguments: [10, 11])
    func limitNeverFailsAValidCredential(lifetime: Int) async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(lifetime))
        let transport = AuthenticatingTransport(wrapping: tokens, provider: tokens)
        let failures = await Self.sendEverySecond(for: 300, through: transport, tokens: tokens, manual: manual)
        // Refreshed every lifetime / 2 s, 6 per 30 s for a 10 s token: the limit (5 per 30 s) refuses some of
        // them, and the request is sent with the still-valid credential; the refresh happens later.
        #expect(failures.isEmpty, "\(failures.count) requests failed: \(failures.map { $0.0?.code })")
        #expect(tokens.sent.value == 300)
        let configuration = AuthenticationConfiguration.standard
        #expect(
            Self.mostWithinAnyWindow(tokens.refreshTimes.value, window: configuration.refreshWindow)
                <= configuration.maximumRefreshes, "\(tokens.refreshTimes.value)")
        #expect(tokens.refreshTimes.value.count > 300 / lifetime, "\(tokens.refreshTimes.value)")
    }

    @Test("A credential living less than 2 × window / (limit + 1) fails only once it has expired", arguments: [6, 8])
    func shorterCredentialFailsOnlyWhenExpired(lifetime: Int) async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(lifetime))
        let transport = AuthenticatingTransport(wrapping: tokens, provider: tokens)
        let failures = await Self.sendEverySecond(for: 300, through: transport, tokens: tokens, manual: manual)
        // Its half-life refreshes spend the limit early in each window, so the credential can expire before the
        // window lets the next refresh through (a 6 s one: 120 of 300 requests): those requests, and only
        // those, fail with AUTH_004 before sending.
        let whileValid = failures.filter(\.credentialWasValid)
        #expect(whileValid.isEmpty, "\(whileValid.count) requests failed with a valid credential")
        for (failure, _) in failures {
            #expect(failure?.code == .refreshLimitReached && failure?.requestWasNotSent == true)
        }
        #expect(tokens.sent.value == 300 - failures.count)
        let configuration = AuthenticationConfiguration.standard
        #expect(
            Self.mostWithinAnyWindow(tokens.refreshTimes.value, window: configuration.refreshWindow)
                <= configuration.maximumRefreshes, "\(tokens.refreshTimes.value)")
    }

    /// One refresh per minute, so the one at 0 s (replacing the provider's first credential) uses it up.
    static let oneRefreshPerMinute = {
        var configuration = AuthenticationConfiguration()
        configuration.maximumRefreshes = 1
        configuration.refreshWindow = .seconds(60)
        return configuration
    }()

    @Test("A refused proactive refresh sends with the valid credential; once it has expired, AUTH_004 before sending")
    func refusedProactiveRefreshThenExpiry() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let tokens = ExpiringTokenService(clock: clock, lifetime: .seconds(10))
        let transport = AuthenticatingTransport(
            wrapping: tokens, provider: tokens, configuration: Self.oneRefreshPerMinute)
        let context = ResilienceContext(key: "auth", clock: clock)
        #expect(try await transport.send(Self.request, context: context).status == 200)
        #expect(tokens.refreshTimes.value == [.zero])
        // From 5 s on, token-1 is due for a refresh the limit refuses: it is still valid, so it is sent.
        manual.advance(by: .seconds(4))
        for _ in 5..<10 {
            manual.advance(by: .seconds(1))
            #expect(try await transport.send(Self.request, context: context).status == 200)
        }
        manual.advance(by: .seconds(1))
        #expect(tokens.sent.value == 6)
        // At 10 s it has expired and the limit still refuses: stopped before sending.
        let limited = classify(
            await #expect(throws: (any Error).self) { try await transport.send(Self.request, context: context) })
        #expect(limited?.code == .refreshLimitReached)
        #expect(limited?.requestWasNotSent == true)
        #expect(limited?.httpStatus == nil)
        #expect(tokens.sent.value == 6)
        #expect(tokens.refreshTimes.value == [.zero])
        // Once the window has passed, the refresh happens and the request goes through.
        manual.advance(by: .seconds(50))
        #expect(try await transport.send(Self.request, context: context).status == 200)
        #expect(tokens.refreshTimes.value == [.zero, .seconds(60)])
    }

    @Test("A valid credential sent despite a refused refresh, then refused with 401: AUTH_004 after the rejection")
    func refusedProactiveRefreshThenRejection() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let tokens = ExpiringTokenService(clock: clock, lifetime: .seconds(10))
        let transport = AuthenticatingTransport(
            wrapping: tokens, provider: tokens, configuration: Self.oneRefreshPerMinute)
        let context = ResilienceContext(key: "auth", clock: clock)
        #expect(try await transport.send(Self.request, context: context).status == 200)
        manual.advance(by: .seconds(6))
        #expect(try await transport.send(Self.request, context: context).status == 200)
        // The server now refuses token-1 although it has not expired; the refresh after the 401 is refused too.
        tokens.revokeAll()
        let limited = classify(
            await #expect(throws: (any Error).self) { try await transport.send(Self.request, context: context) })
        #expect(limited?.code == .refreshLimitReached)
        #expect(limited?.requestWasNotSent == false)
        #expect(limited?.httpStatus == 401)
        #expect(tokens.sent.value == 3, "sent once, refused, not sent again")
        #expect(tokens.refreshTimes.value == [.zero])
    }
}
