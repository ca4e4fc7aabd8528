import Foundation
import ResilienceCore
import ResiliencePolicies
import ResilienceTesting
import ResilienceTracing
import Testing
import Tracing

@Suite("TracingTransport under an enforced timeout")
struct TracingTransportTimeoutTests {
    /// A transport that ignores `context.deadline` (the kind an enforced timeout is for): it answers after a
    /// minute on the clock unless it is cancelled first.
    struct SlowTransport: HTTPTransport {
        let clock: ManualClock

        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            try await ResilienceClock.manual(clock).sleep(for: .seconds(60))
            return HTTPResponse(status: 200, url: request.url)
        }
    }

    @Test("an attempt cut off by an enforced timeout is a failed client span (a timeout), not a cancellation")
    func enforcedTimeoutFailsTheClientSpan() async throws {
        let tracer = W3CTestTracer()
        let clock = ManualClock()
        let transport = TracingTransport(wrapping: SlowTransport(clock: clock), tracer: tracer)
        let pipeline = Pipeline {
            TracingStrategy(tracer: tracer)
            TimeoutStrategy(.seconds(1), mode: .enforced)
        }
        let context = ResilienceContext(key: "lever", clock: .manual(clock))
        let task = Task {
            try await pipeline.execute(context) {
                try await transport.send(HTTPRequest(url: TracingTransportTests.url), context: $0)
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        await #expect(throws: ResilienceError.self) { _ = try await task.value }

        let client = try #require(tracer.memory.finishedSpans.first { $0.kind == .client })
        #expect(client.attributes.get("resilience.cancelled") == nil)
        #expect(client.attributes.get("error.type") == .string(FailureCode.timedOut.rawValue))
        #expect(client.status?.code == .error)
        #expect(client.errors.count == 1)
        let operation = try #require(tracer.memory.finishedSpans.first { $0.kind == .internal })
        #expect(operation.status?.code == .error)
    }
}

@Suite("TracingStrategy under an enclosing enforced deadline")
struct TracingStrategyTimeoutTests {
    @Test("an operation cut off by a deadline enforced outside its span (a source's deadline) fails the span")
    func enclosingDeadlineFailsTheSpan() async throws {
        let tracer = W3CTestTracer()
        let clock = ManualClock()
        let pipeline = Pipeline {
            TimeoutStrategy(.seconds(1), mode: .enforced)
            TracingStrategy(tracer: tracer)
        }
        let context = ResilienceContext(key: "lever", clock: .manual(clock))
        let task = Task {
            try await pipeline.execute(context) { _ in
                try await ResilienceClock.manual(clock).sleep(for: .seconds(60))
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        await #expect(throws: ResilienceError.self) { try await task.value }

        let span = try #require(tracer.memory.finishedSpans.only)
        #expect(span.attributes.get("resilience.cancelled") == nil)
        #expect(span.attributes.get("error.type") == .string(FailureCode.timedOut.rawValue))
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
    }
}
