import AsyncHTTPClient
import Foundation
import InMemoryTracing
import ResilienceAsyncHTTPClient
import ResilienceKit
import ResilienceTesting
import ResilienceTracing
import Testing
import Tracing

/// How `TracingTransport` and AsyncHTTPClient's own tracing combine under the server's span (which
/// `TracingMiddleware` opens; here the test opens it), over a real loopback upstream.
@Suite("Tracing through the AsyncHTTPClient transport")
struct TracingTests {
    /// Sends one GET to `server` through `transport` inside a server span of `tracer`; returns the span ids the
    /// upstream received in the tracer's propagation header.
    static func sendInsideServerSpan(
        _ transport: any HTTPTransport, tracer: InMemoryTracer, server: FaultServer
    ) async throws -> [String] {
        try await tracer.withSpan("GET /jobs", ofKind: .server) { _ in
            let response = try await transport.send(
                HTTPRequest(url: server.url("/jobs")), context: ResilienceContext(key: "jobs"))
            #expect(response.status == 200)
        }
        return try #require(server.requests(to: "/jobs").first).headers.values(for: InMemoryTracer.spanIDKey)
    }

    /// Runs `body`, then shuts `client` down whether or not it threw.
    static func shuttingDown<T>(_ client: HTTPClient, _ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            try await client.shutdown()
            return result
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    @Test("The transport's own client: one client span per attempt, under the server span; the upstream sees it")
    func oneClientSpan() async throws {
        let tracer = InMemoryTracer()
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        let http = AsyncHTTPClientTransport(configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let received = try await Self.shuttingDown(http.client) {
            try await Self.sendInsideServerSpan(
                TracingTransport(wrapping: http, tracer: tracer), tracer: tracer, server: server)
        }

        let spans = tracer.finishedSpans
        let serverSpan = try #require(spans.first { $0.kind == .server })
        let clients = spans.filter { $0.kind == .client }
        #expect(clients.count == 1)
        let client = try #require(clients.first)
        #expect(client.parentSpanID == serverSpan.spanID)
        #expect(received == [client.spanID])
    }

    @Test("A client with a tracer of its own adds a second client span per attempt, a child of TracingTransport's")
    func clientWithItsOwnTracerDoublesTheSpans() async throws {
        let tracer = InMemoryTracer()
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        var configuration = AsyncHTTPClientTransport.clientConfiguration(for: .standard)
        configuration.tracing.tracer = tracer
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let received = try await Self.shuttingDown(client) {
            try await Self.sendInsideServerSpan(
                TracingTransport(wrapping: AsyncHTTPClientTransport(client: client), tracer: tracer), tracer: tracer,
                server: server)
        }

        let spans = tracer.finishedSpans
        let serverSpan = try #require(spans.first { $0.kind == .server })
        let clients = spans.filter { $0.kind == .client }
        #expect(clients.count == 2)
        let outer = try #require(clients.first { $0.parentSpanID == serverSpan.spanID })
        let inner = try #require(clients.first { $0.parentSpanID == outer.spanID })
        #expect(inner.traceID == serverSpan.traceID)
        // The upstream's parent is the innermost span that injected: AsyncHTTPClient's.
        #expect(received.last == inner.spanID, "received \(received), outer \(outer.spanID), inner \(inner.spanID)")
    }
}
