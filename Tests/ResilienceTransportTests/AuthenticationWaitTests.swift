import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// A server that accepts only `Bearer fresh` and answers 401 otherwise (with `headers` on the 401), recording
/// the credentials it saw.
private final class FreshOnlyTransport: HTTPTransport, Sendable {
    let rejectionHeaders: HTTPHeaders
    let seen = LockedBox([String?]())

    init(rejectionHeaders: HTTPHeaders = [:]) { self.rejectionHeaders = rejectionHeaders }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let credential = request.headers["Authorization"]
        seen.mutate { $0.append(credential) }
        if credential == "Bearer fresh" { return HTTPResponse(status: 200) }
        return HTTPResponse(status: 401, headers: rejectionHeaders)
    }
}

/// A provider whose refresh waits at `gate` (never cancelled by it: the refresh runs in a task of its own) and
/// then hands out `Bearer fresh`.
private final class GatedProvider: CredentialProvider {
    let gate = CallGate()
    let refreshes = LockedBox(0)

    func currentCredential() async throws -> Credential? { .bearer("stale") }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        refreshes.mutate { $0 += 1 }
        try await gate.pass()
        return .bearer("fresh")
    }
}

/// A provider whose first refresh never returns (it sleeps for a day on `clock`, until cancelled) and whose later
/// refreshes hand out `Bearer fresh` at once.
private final class HangingOnceProvider: CredentialProvider {
    let clock: ResilienceClock
    let refreshes = LockedBox(0)

    init(clock: ResilienceClock) { self.clock = clock }

    func currentCredential() async throws -> Credential? { .bearer("stale") }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        let count = refreshes.mutate { count -> Int in
            count += 1
            return count
        }
        if count == 1 { try await clock.sleep(for: .seconds(86_400)) }
        return .bearer("fresh")
    }
}

/// A provider whose first refresh ignores cancellation (an HTTP client with no read timeout against a stalled
/// token endpoint, which only returns once `release()` lets it) and whose later refreshes hand out `Bearer fresh`.
private final class UncancellableOnceProvider: CredentialProvider {
    let refreshes = LockedBox(0)
    private let parked = LockedBox<CheckedContinuation<Void, Never>?>(nil)

    var isParked: Bool { parked.value != nil }

    func currentCredential() async throws -> Credential? { .bearer("stale") }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        let count = refreshes.mutate { count -> Int in
            count += 1
            return count
        }
        if count == 1 {
            await withCheckedContinuation { continuation in parked.mutate { $0 = continuation } }
            return .bearer("late")
        }
        return .bearer("fresh")
    }

    /// Lets the first refresh return.
    func release() { parked.mutate { $0.take() }?.resume() }
}

/// A provider whose refresh throws `CancellationError` of its own (its own session was torn down) although
/// nobody cancelled the request waiting for it.
private struct SelfCancellingProvider: CredentialProvider {
    func currentCredential() async throws -> Credential? { .bearer("stale") }
    func refreshCredential(rejected: Credential?) async throws -> Credential { throw CancellationError() }
}

/// A provider whose credential has expired and whose refresh fails with `error` (the token endpoint could not
/// be reached, or refused the refresh token).
private struct FailingRefreshProvider: CredentialProvider {
    let error: any Error
    let expiresAt: ResilienceInstant

    func currentCredential() async throws -> Credential? { .bearer("stale", expiresAt: expiresAt) }
    func refreshCredential(rejected: Credential?) async throws -> Credential { throw error }
}

@Suite("AuthenticatingTransport: waiting for a refresh (ManualClock)")
struct AuthenticationWaitTests {
    @Test("A caller cancelled while the refresh runs leaves at once; the other waiter gets the new credential")
    func cancelledWaiterLeavesAtOnce() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = GatedProvider()
        let server = FreshOnlyTransport()
        let transport = AuthenticatingTransport(wrapping: server, provider: provider)
        let context = ResilienceContext(key: "auth", clock: clock)
        let firstEnded = LockedBox(false)
        let first = Task {
            defer { firstEnded.mutate { $0 = true } }
            return try await transport.send(
                HTTPRequest(url: URL(string: "https://api.example.com/me")!), context: context)
        }
        #expect(await yielding { provider.gate.waitingCount == 1 })
        let second = Task {
            try await transport.send(HTTPRequest(url: URL(string: "https://api.example.com/me")!), context: context)
        }
        #expect(await yielding { server.seen.value.count == 2 })
        first.cancel()
        let leftBeforeTheRefreshEnded = await yielding { firstEnded.value }
        provider.gate.open()
        #expect(leftBeforeTheRefreshEnded)
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(try await second.value.status == 200)
        #expect(provider.refreshes.value == 1)
    }

    @Test("A refresh that hangs past the attempt deadline fails the waiting request as a timeout at the deadline")
    func hungRefreshEndsAtTheDeadline() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = GatedProvider()
        let transport = AuthenticatingTransport(wrapping: FreshOnlyTransport(), provider: provider)
        let context = ResilienceContext(key: "auth", deadline: clock.now().advanced(by: .seconds(5)), clock: clock)
        let ended = LockedBox(false)
        let request = Task {
            defer { ended.mutate { $0 = true } }
            return try await transport.send(
                HTTPRequest(url: URL(string: "https://api.example.com/me")!), context: context)
        }
        #expect(await yielding { provider.gate.waitingCount == 1 })
        manual.advance(by: .seconds(5))
        let endedAtTheDeadline = await yielding { ended.value }
        provider.gate.open()
        #expect(endedAtTheDeadline)
        let failure = classify(await #expect(throws: (any Error).self) { try await request.value })
        #expect(failure?.category == .timeout)
        #expect(failure?.code == .timedOut)
    }

    @Test("A refresh that never returns is cancelled after refreshTimeout; the next request refreshes again")
    func hungRefreshIsAbandoned() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = HangingOnceProvider(clock: clock)
        var configuration = AuthenticationConfiguration()
        configuration.refreshTimeout = .seconds(60)
        let transport = AuthenticatingTransport(
            wrapping: FreshOnlyTransport(), provider: provider, configuration: configuration)
        let me = HTTPRequest(url: URL(string: "https://api.example.com/me")!)
        let sink = RecordingTelemetrySink()
        let first = Task {
            try await transport.send(
                me,
                context: ResilienceContext(
                    key: "auth", deadline: clock.now().advanced(by: .seconds(5)), telemetry: sink, clock: clock))
        }
        // The hung refresh and the request's deadline, then the refresh's own bound.
        await manual.waitForSleepers(count: 2)
        _ = await yielding { manual.sleeperCount == 3 }
        manual.advance(by: .seconds(60))
        let firstFailure = classify(await #expect(throws: (any Error).self) { try await first.value })
        #expect(firstFailure?.code == .timedOut)
        // The refresh round ends (its failure recorded) once its bound cancels it.
        let refreshEnded = await yielding { sink.events.contains { $0.kind == .credentialRefreshed } }
        #expect(refreshEnded)

        let ended = LockedBox(false)
        let second = Task {
            defer { ended.mutate { $0 = true } }
            return try await transport.send(
                me,
                context: ResilienceContext(key: "auth", deadline: clock.now().advanced(by: .seconds(5)), clock: clock))
        }
        let endedWithoutWaiting = await yielding { ended.value }
        if !endedWithoutWaiting { manual.advance(by: .seconds(5)) }  // releases a request stuck behind the hung refresh
        #expect(endedWithoutWaiting)
        #expect(try await second.value.status == 200)
        #expect(provider.refreshes.value == 2)
    }

    @Test("A refresh that ignores cancellation still ends its waiters at refreshTimeout; the next request refreshes")
    func uncancellableRefreshIsAbandonedAtItsTimeout() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = UncancellableOnceProvider()
        defer { provider.release() }
        let transport = AuthenticatingTransport(wrapping: FreshOnlyTransport(), provider: provider)
        let me = HTTPRequest(url: URL(string: "https://api.example.com/me")!)
        let context = ResilienceContext(key: "auth", clock: clock)
        let ended = LockedBox(false)
        let first = Task {
            defer { ended.mutate { $0 = true } }
            return try await transport.send(me, context: context)
        }
        #expect(await yielding { provider.isParked })
        await manual.waitForSleepers(count: 1)
        manual.advance(by: .seconds(60))
        let endedAtTheTimeout = await yielding { ended.value }
        #expect(endedAtTheTimeout, "the request waited past refreshTimeout for a refresh that never returns")
        provider.release()
        let failure = classify(await #expect(throws: (any Error).self) { try await first.value })
        #expect(failure?.code == .timedOut)
        #expect(try await transport.send(me, context: context).status == 200)
        #expect(provider.refreshes.value == 2)
    }

    @Test("A refresh that throws CancellationError of its own fails a caller nobody cancelled as session expired")
    func providersCancellationIsNotTheCallers() async throws {
        let transport = AuthenticatingTransport(wrapping: FreshOnlyTransport(), provider: SelfCancellingProvider())
        let context = ResilienceContext(key: "auth", clock: .manual(ManualClock()))
        let failure = classify(
            await #expect(throws: (any Error).self) {
                try await transport.send(HTTPRequest(url: URL(string: "https://api.example.com/me")!), context: context)
            })
        #expect(failure?.category == .authentication)
        #expect(failure?.code == .sessionExpired)
    }

    @Test(
        "A 401 whose headers say the quota is spent is a rate limit: no refresh, no replay before the server's time",
        arguments: [["Retry-After": "30"], ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"]] as [HTTPHeaders])
    func rateLimited401IsNotACredentialRejection(headers: HTTPHeaders) async throws {
        let provider = GatedProvider()
        provider.gate.open()
        let server = FreshOnlyTransport(rejectionHeaders: headers)
        let transport = AuthenticatingTransport(wrapping: server, provider: provider)
        let context = ResilienceContext(key: "auth", clock: .manual(ManualClock()))
        let response = try await transport.send(
            HTTPRequest(url: URL(string: "https://api.example.com/me")!), context: context)
        #expect(response.status == 401)
        #expect(server.seen.value == ["Bearer stale"])
        #expect(provider.refreshes.value == 0)
    }

    @Test(
        "A refresh that cannot reach the token endpoint fails as that network failure, not as an expired session",
        arguments: [true, false])
    func unreachableTokenEndpointIsNotSessionExpiry(proactive: Bool) async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = FailingRefreshProvider(
            error: URLError(.notConnectedToInternet),
            expiresAt: clock.now().advanced(by: proactive ? .seconds(10) : .seconds(3_600)))
        let transport = AuthenticatingTransport(wrapping: FreshOnlyTransport(), provider: provider)
        let context = ResilienceContext(key: "auth", clock: clock)
        let request = HTTPRequest(url: URL(string: "https://api.example.com/me")!)
        let failure = classify(
            await #expect(throws: (any Error).self) { try await transport.send(request, context: context) })
        #expect(failure?.category == .networkUnreachable)
        #expect(failure?.isTransient == true)
        // A refresh token the server refused is still an expired session.
        let refused = AuthenticatingTransport(
            wrapping: FreshOnlyTransport(),
            provider: FailingRefreshProvider(
                error: URLError(.userAuthenticationRequired), expiresAt: provider.expiresAt))
        let expired = classify(
            await #expect(throws: (any Error).self) { try await refused.send(request, context: context) })
        #expect(expired?.code == .sessionExpired)
    }
}
