import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// The coalescing decorator: identical GETs share one request; credentials, varying headers, methods and
/// bodies keep requests apart; cancellation is each caller's own.
@Suite("CoalescingTransport")
struct CoalescingTransportTests {
    /// A transport that records each request and holds it at a gate.
    final class GatedTransport: HTTPTransport {
        let gate = CallGate()
        let sent = LockedState(initialState: [HTTPRequest]())

        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            sent.withLock { $0.append(request) }
            try await gate.pass()
            let who = request.headers["Authorization"] ?? "anonymous"
            return HTTPResponse(status: 200, body: Data("\(request.url.path) for \(who)".utf8))
        }
    }

    static func settle(_ what: Comment, _ condition: () -> Bool) async {
        for _ in 0..<200_000 {
            if condition() { return }
            await Task.yield()
        }
        Issue.record("never settled: \(what)")
    }

    let url = URL(string: "https://api.example.com/jobs?page=1")!

    @Test("1,000 concurrent identical GETs: one request upstream, 1,000 responses, no leak")
    func thousandGets() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext.test(telemetry: sink)
        let request = HTTPRequest(url: url, headers: ["Authorization": "Bearer alice"])
        let key = try #require(transport.key(for: request))
        let callers = 1_000
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<callers {
                group.addTask { try await transport.send(request, context: context).body }
            }
            await Self.settle("every caller waits") { transport.flights.callerCount(for: key) == callers }
            base.gate.open()
            var bodies: [Data] = []
            for try await body in group { bodies.append(body) }
            return bodies
        }
        #expect(base.sent.withLock { $0.count } == 1)
        #expect(bodies == Array(repeating: Data("/jobs for Bearer alice".utf8), count: callers))
        #expect(sink.count(.requestCoalesced) == callers - 1)
        #expect(transport.flights.inFlightCount == 0)
    }

    @Test("The key holds method, URL, varying headers and credentials; the credentials never show")
    func keys() throws {
        let transport = CoalescingTransport(wrapping: GatedTransport())
        let alice = HTTPRequest(url: url, headers: ["Authorization": "Bearer alice-secret"])
        let bob = HTTPRequest(url: url, headers: ["authorization": "Bearer bob-secret"])
        let aliceJSON = HTTPRequest(
            url: url, headers: ["Authorization": "Bearer alice-secret", "Accept": "application/json"])
        let aliceHead = HTTPRequest(method: .head, url: url, headers: ["Authorization": "Bearer alice-secret"])
        let aliceKey = try #require(transport.key(for: alice))
        #expect(transport.key(for: alice) == aliceKey)
        #expect(transport.key(for: bob) != aliceKey)
        #expect(transport.key(for: aliceJSON) != aliceKey)
        #expect(transport.key(for: aliceHead) != aliceKey)
        #expect(transport.key(for: HTTPRequest(url: url.appending(path: "2"))) != aliceKey)
        #expect(!aliceKey.description.contains("secret"))
        #expect(aliceKey.description.hasPrefix("GET https://api.example.com/jobs?page=1 [credentials "))
        let bobKey = try #require(transport.key(for: bob))
        #expect(aliceKey.credentialFingerprint != bobKey.credentialFingerprint)
        #expect(transport.key(for: HTTPRequest(method: .post, url: url)) == nil)
        #expect(transport.key(for: HTTPRequest(method: .get, url: url, body: Data("x".utf8))) == nil)
        let everything = CoalescingTransport(wrapping: GatedTransport(), methods: [.get, .post])
        #expect(everything.key(for: HTTPRequest(method: .post, url: url, idempotency: .idempotent)) != nil)
    }

    @Test("Credentials in the URL (user information, a token parameter) keep users apart and never show")
    func credentialsInTheURL() throws {
        let transport = CoalescingTransport(wrapping: GatedTransport())
        let alice = HTTPRequest(url: URL(string: "https://alice:alice-secret@api.example.com/jobs?access_token=tok-a")!)
        let bob = HTTPRequest(url: URL(string: "https://bob:bob-secret@api.example.com/jobs?access_token=tok-b")!)
        let aliceKey = try #require(transport.key(for: alice))
        #expect(transport.key(for: bob) != aliceKey)
        for secret in ["alice-secret", "tok-a"] {
            #expect(!aliceKey.description.contains(secret))
        }
        #expect(aliceKey.description.hasPrefix("GET https://"))
        #expect(aliceKey.description.contains("api.example.com/jobs"))
    }

    @Test("A request marked non-idempotent is never coalesced, whatever its method and the methods allowed")
    func nonIdempotentApart() async throws {
        let everything = CoalescingTransport(wrapping: GatedTransport(), methods: [.get, .post])
        #expect(everything.key(for: HTTPRequest(method: .post, url: url)) == nil)
        #expect(everything.key(for: HTTPRequest(method: .post, url: url, idempotency: .keyed("k"))) == nil)
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let request = HTTPRequest(url: url, idempotency: .nonIdempotent)
        #expect(transport.key(for: request) == nil)
        let context = ResilienceContext.test()
        async let first = transport.send(request, context: context)
        async let second = transport.send(request, context: context)
        await Self.settle("both requests upstream") { base.gate.waitingCount == 2 }
        base.gate.open()
        _ = try await (first, second)
        #expect(base.sent.withLock { $0.count } == 2)
    }

    @Test("Credentials in any header keep two users apart; every header not shown is compared, never shown")
    func credentialsInAnyHeader() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let alice = HTTPRequest(url: url, headers: ["X-API-Key": "alice-secret"])
        let bob = HTTPRequest(url: url, headers: ["x-api-key": "bob-secret"])
        let aliceKey = try #require(transport.key(for: alice))
        #expect(transport.key(for: bob) != aliceKey)
        #expect(!aliceKey.description.contains("secret"))
        #expect(transport.key(for: HTTPRequest(url: url, headers: ["x-api-key": "alice-secret"])) == aliceKey)
        // Field order does not matter; repeated fields are not the same as one combined field.
        let ordered = HTTPRequest(url: url, headers: ["A": "1", "B": "2"])
        let reordered = HTTPRequest(url: url, headers: ["b": "2", "a": "1"])
        #expect(transport.key(for: ordered) == transport.key(for: reordered))
        let twoCookies = HTTPRequest(url: url, headers: ["Cookie": "a=1", "Cookie": "b=2"])
        let oneCookie = HTTPRequest(url: url, headers: ["Cookie": "a=1, b=2"])
        #expect(transport.key(for: twoCookies) != transport.key(for: oneCookie))
        let context = ResilienceContext.test()
        async let forAlice = transport.send(alice, context: context)
        async let forBob = transport.send(bob, context: context)
        await Self.settle("two requests upstream") { base.gate.waitingCount == 2 }
        base.gate.open()
        _ = try await (forAlice, forBob)
        #expect(
            base.sent.withLock { $0.map { $0.headers["X-API-Key"] ?? "" }.sorted() } == ["alice-secret", "bob-secret"])
    }

    @Test("Different credentials never share a response")
    func credentialsApart() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let context = ResilienceContext.test()
        async let alice = transport.send(HTTPRequest(url: url, headers: ["Authorization": "A"]), context: context)
        async let bob = transport.send(HTTPRequest(url: url, headers: ["Authorization": "B"]), context: context)
        await Self.settle("two requests upstream") { base.gate.waitingCount == 2 }
        base.gate.open()
        let (forAlice, forBob) = try await (alice, bob)
        #expect(forAlice.body == Data("/jobs for A".utf8))
        #expect(forBob.body == Data("/jobs for B".utf8))
    }

    @Test("One caller cancelled leaves the request running; all cancelled cancels it upstream")
    func cancellation() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let context = ResilienceContext.test()
        let request = HTTPRequest(url: url)
        let key = try #require(transport.key(for: request))
        let callers = (0..<3).map { _ in Task { try await transport.send(request, context: context) } }
        await Self.settle("three callers") {
            transport.flights.callerCount(for: key) == 3 && base.gate.waitingCount == 1
        }
        callers[0].cancel()
        await #expect(throws: CancellationError.self) { try await callers[0].value }
        #expect(base.gate.cancellations == 0)
        callers[1].cancel()
        callers[2].cancel()
        for caller in callers.dropFirst() { await #expect(throws: CancellationError.self) { try await caller.value } }
        await Self.settle("the request was cancelled") { base.gate.cancellations == 1 }
        #expect(transport.flights.inFlightCount == 0)
        #expect(base.sent.withLock { $0.count } == 1)
    }

    @Test("Callers that got the request's error emit request-coalesced too, with its classification")
    func sharedFailureReported() async throws {
        let base = DeadlineHonouringTransport()
        let transport = CoalescingTransport(wrapping: base)
        let clock = ManualClock()
        let request = HTTPRequest(url: url)
        let key = try #require(transport.key(for: request))
        // One caller without a deadline, one with: both ways of waiting report the shared failure.
        let contexts = [
            ResilienceContext.test(clock: clock), ResilienceContext.test(clock: clock),
            ResilienceContext.test(clock: clock, timeout: .seconds(30)),
        ]
        let callers = contexts.map { context in Task { try await transport.send(request, context: context) } }
        await Self.settle("every caller waits") {
            transport.flights.callerCount(for: key) == 3 && base.gate.waitingCount == 1
        }
        base.gate.open()
        for caller in callers { await #expect(throws: TransportError.self) { try await caller.value } }
        let coalesced = contexts.flatMap { $0.recordingSink?.events(.requestCoalesced) ?? [] }
        #expect(coalesced.count == 2)
        #expect(coalesced.allSatisfy { $0.classification?.category == .timeout })
        #expect(transport.flights.inFlightCount == 0)
    }

    @Test("A caller that joined waits no longer than its own deadline; the request goes on for the others")
    func joinerDeadline() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let clock = ManualClock()
        let request = HTTPRequest(url: url)
        let key = try #require(transport.key(for: request))
        let patient = ResilienceContext.test(clock: clock, timeout: .seconds(30))
        let sink = RecordingTelemetrySink()
        let hurried = ResilienceContext.test(clock: clock, telemetry: sink, timeout: .seconds(1))
        let first = Task { try await transport.send(request, context: patient) }
        await Self.settle("the first request upstream") { base.gate.waitingCount == 1 }
        let finished = LockedState(initialState: false)
        let joiner = Task {
            defer { finished.withLock { $0 = true } }
            return try await transport.send(request, context: hurried)
        }
        await Self.settle("the joiner waits") { transport.flights.callerCount(for: key) == 2 }
        // Each caller's deadline timer sleeps on the clock.
        await Self.settle("both deadlines armed") { clock.sleeperCount == 2 }
        clock.advance(by: .seconds(1))
        await Self.settle("the joiner gave up at its deadline") { finished.withLock { $0 } }
        #expect(transport.flights.callerCount(for: key) == 1)
        #expect(base.gate.cancellations == 0)
        base.gate.open()
        let error = await #expect(throws: TransportError.self) { try await joiner.value }
        #expect(error?.classification.category == .timeout)
        #expect(sink.count(.timedOut) == 1)
        #expect(try await first.value.body == Data("/jobs for anonymous".utf8))
        #expect(base.sent.withLock { $0.count } == 1)
        #expect(transport.flights.inFlightCount == 0)
    }

    /// A transport that honours the deadline as URLSessionTransport does: once its exchange has been cancelled
    /// and has ended (here: when the test opens the gate), it reports the timeout to the context and throws it.
    final class DeadlineHonouringTransport: HTTPTransport {
        let gate = CallGate()

        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            try? await gate.pass()
            context.emit(.timedOut) { $0.duration = .seconds(1) }
            throw TransportError.timedOut(after: .seconds(1), url: request.url)
        }
    }

    @Test("The caller whose request it is hears of its timeout once, from the request, while others wait for it")
    func senderTimeoutReportedOnce() async throws {
        let base = DeadlineHonouringTransport()
        let transport = CoalescingTransport(wrapping: base)
        let clock = ManualClock()
        let request = HTTPRequest(url: url)
        let key = try #require(transport.key(for: request))
        let senderSink = RecordingTelemetrySink()
        let joinerSink = RecordingTelemetrySink()
        let sender = ResilienceContext.test(clock: clock, telemetry: senderSink, timeout: .seconds(1))
        let joiner = ResilienceContext.test(clock: clock, telemetry: joinerSink, timeout: .seconds(30))
        let first = Task { try await transport.send(request, context: sender) }
        await Self.settle("the request upstream") { base.gate.waitingCount == 1 }
        let second = Task { try await transport.send(request, context: joiner) }
        await Self.settle("the joiner waits") { transport.flights.callerCount(for: key) == 2 }
        await Self.settle("the joiner's deadline armed") { clock.sleeperCount >= 1 }
        clock.advance(by: .seconds(1))
        // Let any timer that fired at the sender's deadline run its course before the request reports.
        for _ in 0..<1_000 { await Task.yield() }
        base.gate.open()
        for caller in [first, second] {
            let error = await #expect(throws: TransportError.self) { try await caller.value }
            #expect(error?.classification.category == .timeout)
        }
        #expect(senderSink.count(.timedOut) == 1)
        #expect(joinerSink.count(.timedOut) == 0)
        #expect(transport.flights.inFlightCount == 0)
    }

    /// A transport standing in for a priority-aware pipeline: a sheddable request is shed once the gate opens.
    final class SheddingTransport: HTTPTransport {
        let gate = CallGate()
        let sent = LockedState(initialState: [RequestPriority]())

        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            sent.withLock { $0.append(context.priority) }
            try await gate.pass()
            if context.priority < .default { throw ResilienceError(.bulkheadFull, key: context.key) }
            return HTTPResponse(status: 200, body: Data("\(context.priority)".utf8))
        }
    }

    @Test("Requests of different priorities never share: a critical caller never gets a sheddable one's shedding")
    func prioritiesApart() async throws {
        let base = SheddingTransport()
        let transport = CoalescingTransport(wrapping: base)
        let request = HTTPRequest(url: url)
        var prefetch = ResilienceContext.test()
        prefetch.priority = .sheddable
        var payment = ResilienceContext.test()
        payment.priority = .critical
        let sheddable = Task { try await transport.send(request, context: prefetch) }
        await Self.settle("the sheddable request upstream") { base.gate.waitingCount == 1 }
        let critical = Task { try await transport.send(request, context: payment) }
        await Self.settle("the critical request upstream") { base.gate.waitingCount == 2 }
        base.gate.open()
        #expect(try await critical.value.body == Data("critical".utf8))
        await #expect(throws: ResilienceError.self) { try await sheddable.value }
        #expect(base.sent.withLock { $0 } == [.sheddable, .critical])
        #expect(transport.flights.inFlightCount == 0)
    }

    @Test("A sender whose wrapped transport ignores the deadline still stops at it, and hears of it once")
    func senderDeadlineOverATransportThatIgnoresIt() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext.test(clock: clock, telemetry: sink, timeout: .seconds(1))
        let ended = LockedState(initialState: false)
        let caller = Task {
            defer { ended.withLock { $0 = true } }
            return try await transport.send(HTTPRequest(url: url), context: context)
        }
        await Self.settle("the request upstream") { base.gate.waitingCount == 1 }
        await Self.settle("the sender's deadline armed") { clock.sleeperCount == 1 }
        clock.advance(by: .seconds(1))
        await Self.settle("the sender gave up at its deadline") { ended.withLock { $0 } }
        base.gate.open()
        let error = await #expect(throws: TransportError.self) { try await caller.value }
        #expect(error?.classification.category == .timeout)
        #expect(sink.count(.timedOut) == 1)
        await Self.settle("the abandoned request was cancelled") { base.gate.cancellations == 1 }
        #expect(transport.flights.inFlightCount == 0)
    }

    @Test("A caller whose deadline passed before it arrived times out after no time, never a negative one")
    func passedDeadlineIsNoTime() async throws {
        let base = GatedTransport()
        let transport = CoalescingTransport(wrapping: base)
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        let sink = RecordingTelemetrySink()
        var context = ResilienceContext.test(clock: clock, telemetry: sink)
        context.deadline = context.clock.now().advanced(by: .seconds(-3))
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: url), context: context)
        }
        #expect(error?.code == .timedOut)
        #expect(error?.classification.requestWasNotSent == true)
        #expect(sink.events(.timedOut).map(\.duration) == [.zero])
        #expect(base.sent.withLock { $0 }.isEmpty)
    }

    /// A clock whose reading the test sets and whose sleeps end only when cancelled: a deadline can pass on it
    /// while the timer racing that deadline has not fired yet.
    final class UnfiredClock: Clock, Sendable {
        typealias Instant = ManualClock.Instant
        let reading = LockedState(initialState: Duration.zero)
        var now: Instant { Instant(offset: reading.withLock { $0 }) }
        var minimumResolution: Duration { .nanoseconds(1) }

        let timers = CallGate()

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            // A gate never opened: only cancellation ends the wait.
            try await timers.pass()
        }
    }

    /// A transport whose request times out, without reporting it, when the test opens the gate.
    final class SilentTimeoutTransport: HTTPTransport {
        let gate = CallGate()

        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            try? await gate.pass()
            throw TransportError.timedOut(after: .seconds(1), url: request.url)
        }
    }

    @Test("A joiner whose deadline has passed when the request's timeout reaches it hears of its timeout once")
    func joinerTimeoutFromTheRequestReported() async throws {
        let base = SilentTimeoutTransport()
        let transport = CoalescingTransport(wrapping: base)
        let request = HTTPRequest(url: url)
        let key = try #require(transport.key(for: request))
        let first = Task { try await transport.send(request, context: .test()) }
        await Self.settle("the request upstream") { base.gate.waitingCount == 1 }
        let clock = UnfiredClock()
        let sink = RecordingTelemetrySink()
        let joinerClock = ResilienceClock(clock, origin: ManualClock.Instant(offset: .zero))
        var joiner = ResilienceContext.test(telemetry: sink)
        joiner.clock = joinerClock
        joiner.deadline = joinerClock.now().advanced(by: .seconds(1))
        let second = Task { try await transport.send(request, context: joiner) }
        await Self.settle("the joiner waits") { transport.flights.callerCount(for: key) == 2 }
        // The joiner's deadline passes, and the request times out before its timer has fired.
        clock.reading.withLock { $0 = .seconds(1) }
        base.gate.open()
        for caller in [first, second] {
            let error = await #expect(throws: TransportError.self) { try await caller.value }
            #expect(error?.classification.category == .timeout)
        }
        #expect(sink.count(.timedOut) == 1)
    }
}
