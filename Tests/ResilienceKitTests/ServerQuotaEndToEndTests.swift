import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// The server's "not before" (a spent `RateLimit` quota on a `200`, a `429`'s `Retry-After`) honoured by every
/// preset end to end: `ResilientTransport` over a transport that reports nothing itself, on a `ManualClock`.
@Suite("Server quotas through ResilientTransport and the presets (ManualClock)")
struct ServerQuotaEndToEndTests {
    static func pipeline(_ name: String, _ clock: ManualClock) -> Pipeline {
        let random = SharedRandomSource(seed: 7)
        return switch name {
        case "interactive": Pipeline.interactive(clock: .manual(clock), random: random)
        case "background": Pipeline.background(clock: .manual(clock), random: random)
        default: Pipeline.standard(clock: .manual(clock), random: random)
        }
    }

    static let url = "https://api.example/jobs"

    /// Returns once `task` has finished or `count` tasks sleep on `clock`, whichever comes first, so a test
    /// of a request that should wait fails, instead of hanging, when the request is sent at once.
    static func settled(_ task: Task<HTTPResponse, any Error>, orSleepers count: Int, on clock: ManualClock) async {
        let (settled, signal) = AsyncStream<Void>.makeStream()
        Task {
            await clock.waitForSleepers(count: count)
            signal.yield()
        }
        Task {
            _ = await task.result
            signal.yield()
        }
        for await _ in settled { break }
    }

    @Test(
        "A 200 that spends the quota holds the next request until the reset, whatever the base transport",
        .timeLimit(.minutes(1)), arguments: ["standard", "interactive", "background"])
    func spentQuotaOnASuccess(name: String) async throws {
        let clock = ManualClock()
        let base = ScriptedHTTPTransport(clock: .manual(clock))
        base.script(
            Self.url,
            [
                .status(200, headers: ["RateLimit": #""default";r=0;t=5"#, "RateLimit-Policy": #""default";q=2;w=5"#]),
                .status(200),
            ])
        let pipeline = Self.pipeline(name, clock)
        let transport = ResilientTransport(wrapping: base) { _ in pipeline }
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let request = HTTPRequest(url: URL(string: Self.url)!)
        _ = try await transport.send(request, context: context)
        let next = Task { try await transport.send(request, context: context) }
        await Self.settled(next, orSleepers: 1, on: clock)
        #expect(base.requests.count == 1)
        clock.advance(by: .seconds(4.9))
        #expect(base.requests.count == 1)
        clock.advance(by: .seconds(0.1))
        #expect(try await next.value.status == 200)
        #expect(base.requests.count == 2)
    }

    @Test(
        "A 429's Retry-After holds a request already queued for a quota reset: none is sent before the time it named",
        .timeLimit(.minutes(1)), arguments: ["standard", "interactive", "background"])
    func retryAfterHoldsQueuedRequests(name: String) async throws {
        let clock = ManualClock()
        // First request: a 429 asking for 10 s, 3 s later. Second: a 200 that spends the quota until 5 s.
        let base = ScriptedHTTPTransport(
            sequence: [
                .status(429, headers: ["Retry-After": "10"], after: .seconds(3)),
                .status(200, headers: ["RateLimit": #""default";r=0;t=5"#]),
                .status(200),
            ],
            clock: .manual(clock))
        let pipeline = Self.pipeline(name, clock)
        let transport = ResilientTransport(wrapping: base) { _ in pipeline }
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let request = HTTPRequest(url: URL(string: Self.url)!)
        let rateLimited = Task { try await transport.send(request, context: context) }
        await clock.waitForSleepers(count: 1)
        _ = try await transport.send(request, context: context)
        // Waits in the quota stage for the reset at 5 s, past the breaker.
        let queued = Task { try await transport.send(request, context: context) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(3))
        if name == "interactive" {
            _ = await rateLimited.result  // a 10 s hint is beyond the interactive retry's 5 s: no retry
        } else {
            await clock.waitForSleepers(count: 2)  // the retry, asleep until 13 s, and the queued request
        }
        #expect(base.requests.count == 2)
        clock.advance(by: .seconds(2))
        // At 5 s the quota has reset, but the 429 received at 3 s forbids any request before 13 s: the queued
        // request sleeps again (or, past the interactive deadline, gives up) instead of being sent.
        await Self.settled(queued, orSleepers: name == "interactive" ? 1 : 2, on: clock)
        #expect(base.requests.count == 2)
        clock.advance(by: .seconds(8))
        let queuedResult = await queued.result
        _ = await rateLimited.result
        // At 13 s the queued request goes (the interactive one gave up within its 10 s instead).
        #expect((try? queuedResult.get())?.status == (name == "interactive" ? nil : 200))
    }

    @Test(
        "A 503 that names its window's reset with calls left (GitHub's headers on every response) is retried",
        .timeLimit(.minutes(1)), arguments: ["standard", "interactive", "background"])
    func resetWithCallsLeftIsNoWait(name: String) async throws {
        let clock = ManualClock()
        let github: HTTPHeaders = [
            "X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": "1700002400", "Date": "Tue, 14 Nov 2023 22:13:20 GMT",
        ]
        let base = ScriptedHTTPTransport(
            sequence: [.status(503, headers: github), .status(200)], clock: .manual(clock))
        let pipeline = Self.pipeline(name, clock)
        let transport = ResilientTransport(wrapping: base) { _ in pipeline }
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let request = Task { try await transport.send(HTTPRequest(url: URL(string: Self.url)!), context: context) }
        await Self.settled(request, orSleepers: 1, on: clock)
        clock.advance(by: .seconds(3))
        // Not "retry after 40 minutes" (beyond every preset's longest hint, so never retried): the backoff.
        #expect(try await request.value.status == 200)
        #expect(base.requests.count == 2)
    }
}
