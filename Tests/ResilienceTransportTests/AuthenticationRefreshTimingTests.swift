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
    /// When each refresh was asked for, failed ones included.
    let refreshTimes = LockedBox([Duration]())
    let sent = LockedBox(0)
    /// While true the token endpoint cannot be reached: a refresh throws `URLError(.timedOut)`.
    let endpointDown = LockedBox(false)
    /// While true the API cannot be reached: a request throws `URLError(.cannotConnectToHost)` (after it was
    /// counted as sent).
    let apiDown = LockedBox(false)

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
        if endpointDown.value { throw URLError(.timedOut) }
        return issue("token-\(count)")
    }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        sent.mutate { $0 += 1 }
        if apiDown.value { throw URLError(.cannotConnectToHost) }
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

/// A server that accepts every request (200) and takes `answerTime` on the manual clock to answer.
private final class SlowServer: HTTPTransport, Sendable {
    let manual: ManualClock
    let answerTime: Duration

    init(manual: ManualClock, answerTime: Duration) {
        self.manual = manual
        self.answerTime = answerTime
    }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        manual.advance(by: answerTime)
        return HTTPResponse(status: 200)
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
        "A credential that served requests is renewed when it comes due, however short-lived: never AUTH_004",
        arguments: [2, 3, 5, 6, 8, 10, 11])
    func renewalIsNeverRefusedForTheLimit(lifetime: Int) async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(lifetime))
        let transport = AuthenticatingTransport(wrapping: tokens, provider: tokens)
        let failures = await Self.sendEverySecond(for: 300, through: transport, manual: manual)
        #expect(failures.isEmpty, "\(failures.count) requests failed: \(Set(failures))")
        #expect(tokens.sent.value == 300)
        // Refreshed at 0 s (the provider's first credential expires within the skew), then at the first request
        // once half of each credential's life is over: a 5 s token every 3 s (100 refreshes in 5 minutes, not
        // one per request), more often than the limit's 5 per 30 s, none refused.
        let every = (lifetime + 1) / 2
        #expect(tokens.refreshTimes.value.count == (300 + every - 1) / every)
        #expect(tokens.refreshTimes.value == stride(from: 0, to: 300, by: every).map { .seconds($0) })
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

    @Test("A provider whose credentials arrive expired: every refresh counts, at most 5 per 30 s, for 5 minutes")
    func expiredCredentialsStayLimited() async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .zero)
        let server = FixedStatusServer(status: 200)
        let transport = AuthenticatingTransport(wrapping: server, provider: tokens)
        let clock = ResilienceClock.manual(manual)
        var limited = 0
        for _ in 0..<300 {
            // Ten requests at each instant: a burst must not buy more refreshes than one request.
            for _ in 0..<10 {
                do {
                    _ = try await transport.send(Self.request, context: ResilienceContext(key: "auth", clock: clock))
                } catch {
                    #expect(classify(error)?.code == .refreshLimitReached)
                    limited += 1
                }
            }
            manual.advance(by: .seconds(1))
        }
        // Accepted by the server, but never valid when accepted: not one of these refreshes paid off.
        let configuration = AuthenticationConfiguration.standard
        #expect(
            Self.mostWithinAnyWindow(tokens.refreshTimes.value, window: configuration.refreshWindow)
                <= configuration.maximumRefreshes, "\(tokens.refreshTimes.value)")
        #expect(tokens.refreshTimes.value.count == 50)
        #expect(limited == 3_000 - 50)
    }

    @Test("A credential that expires before the server's answer arrives never served: its refreshes count")
    func credentialOutlivedByItsAnswerStaysLimited() async throws {
        let manual = ManualClock()
        // Each credential lives 1 s and every answer takes 2 s: the server accepts it, too late to count.
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(1))
        let transport = AuthenticatingTransport(
            wrapping: SlowServer(manual: manual, answerTime: .seconds(2)), provider: tokens)
        let clock = ResilienceClock.manual(manual)
        var limited = 0
        for _ in 0..<300 {
            do {
                _ = try await transport.send(Self.request, context: ResilienceContext(key: "auth", clock: clock))
            } catch {
                limited += 1
            }
            manual.advance(by: .seconds(1))
        }
        #expect(limited > 0)
        let configuration = AuthenticationConfiguration.standard
        #expect(
            Self.mostWithinAnyWindow(tokens.refreshTimes.value, window: configuration.refreshWindow)
                <= configuration.maximumRefreshes, "\(tokens.refreshTimes.value)")
    }

    @Test(
        "A server that refuses every credential: short-lived ones too, at most 5 refreshes per 30 s",
        arguments: [5, 3_600])
    func refusingServerStaysLimited(lifetime: Int) async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(lifetime))
        let server = FixedStatusServer(status: 401)
        let transport = AuthenticatingTransport(wrapping: server, provider: tokens)
        let failures = await Self.sendEverySecond(for: 300, through: transport, tokens: tokens, manual: manual)
        #expect(failures.count == 300)
        let configuration = AuthenticationConfiguration.standard
        #expect(
            Self.mostWithinAnyWindow(tokens.refreshTimes.value, window: configuration.refreshWindow)
                == configuration.maximumRefreshes, "\(tokens.refreshTimes.value)")
    }

    @Test("A renewal that fails is tried once for free; further attempts for that credential count")
    func failedRenewalStaysLimited() async throws {
        let manual = ManualClock()
        let tokens = ExpiringTokenService(clock: .manual(manual), lifetime: .seconds(5))
        let transport = AuthenticatingTransport(wrapping: tokens, provider: tokens)
        #expect(await Self.sendEverySecond(for: 10, through: transport, manual: manual).isEmpty)
        let healthy = tokens.refreshTimes.value.count
        // The token endpoint goes down for the next 5 minutes; requests keep coming, one a second.
        tokens.endpointDown.mutate { $0 = true }
        _ = await Self.sendEverySecond(for: 300, through: transport, manual: manual)
        let attempts = Array(tokens.refreshTimes.value.dropFirst(healthy))
        let configuration = AuthenticationConfiguration.standard
        // The free renewal, then the counted attempts: never more than the limit plus that one in a window.
        #expect(
            Self.mostWithinAnyWindow(attempts, window: configuration.refreshWindow)
                <= configuration.maximumRefreshes + 1, "\(attempts)")
        #expect(attempts.count <= 1 + 5 * 10, "\(attempts)")
    }

    /// One refresh per minute, so the one at 0 s (replacing the provider's first credential) uses it up.
    static let oneRefreshPerMinute = {
        var configuration = AuthenticationConfiguration()
        configuration.maximumRefreshes = 1
        configuration.refreshWindow = .seconds(60)
        return configuration
    }()

    @Test(
        "A credential that never served: a refused refresh sends it while valid, AUTH_004 once expired; renewed once it serves"
    )
    func refusedRefreshThenExpiryThenRenewal() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let tokens = ExpiringTokenService(clock: clock, lifetime: .seconds(10))
        let transport = AuthenticatingTransport(
            wrapping: tokens, provider: tokens, configuration: Self.oneRefreshPerMinute)
        let context = ResilienceContext(key: "auth", clock: clock)
        // The API cannot be reached: token-1 (refreshed at 0 s, counted) is sent but never answered.
        tokens.apiDown.mutate { $0 = true }
        await #expect(throws: URLError.self) { try await transport.send(Self.request, context: context) }
        #expect(tokens.refreshTimes.value == [.zero])
        // From 5 s on, token-1 is due for a refresh the limit refuses: it is still valid, so it is sent.
        manual.advance(by: .seconds(4))
        for _ in 5..<10 {
            manual.advance(by: .seconds(1))
            await #expect(throws: URLError.self) { try await transport.send(Self.request, context: context) }
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
        // Once the window has passed, the refresh happens and the request goes through: token-2 served.
        tokens.apiDown.mutate { $0 = false }
        manual.advance(by: .seconds(50))
        #expect(try await transport.send(Self.request, context: context).status == 200)
        #expect(tokens.refreshTimes.value == [.zero, .seconds(60)])
        // At 65 s it is due; the limit (1 per minute) is spent, but a credential that served is renewed.
        manual.advance(by: .seconds(5))
        #expect(try await transport.send(Self.request, context: context).status == 200)
        #expect(tokens.refreshTimes.value == [.zero, .seconds(60), .seconds(65)])
    }

    @Test("A renewal is not counted, the refresh after a later 401 is: AUTH_004 after the rejection")
    func renewalThenRejection() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let tokens = ExpiringTokenService(clock: clock, lifetime: .seconds(10))
        let transport = AuthenticatingTransport(
            wrapping: tokens, provider: tokens, configuration: Self.oneRefreshPerMinute)
        let context = ResilienceContext(key: "auth", clock: clock)
        #expect(try await transport.send(Self.request, context: context).status == 200)
        manual.advance(by: .seconds(6))
        // token-1 served and came due: renewed although the limit is spent.
        #expect(try await transport.send(Self.request, context: context).status == 200)
        #expect(tokens.refreshTimes.value == [.zero, .seconds(6)])
        // The server now refuses token-2 although it has not expired; the refresh after the 401 counts, and the
        // limit refuses it.
        tokens.revokeAll()
        let limited = classify(
            await #expect(throws: (any Error).self) { try await transport.send(Self.request, context: context) })
        #expect(limited?.code == .refreshLimitReached)
        #expect(limited?.requestWasNotSent == false)
        #expect(limited?.httpStatus == 401)
        #expect(tokens.sent.value == 3, "sent once, refused, not sent again")
        #expect(tokens.refreshTimes.value == [.zero, .seconds(6)])
    }
}
