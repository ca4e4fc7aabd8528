import AsyncHTTPClient
import Foundation
import ResilienceTesting
import ResilienceTransport
import ServiceLifecycleTestKit
import Testing

@testable import ResilienceAsyncHTTPClient

/// The transport as a swift-service-lifecycle `Service`, and the client it creates, over real loopback sockets.
@Suite("AsyncHTTPClientTransport as a Service")
struct ServiceTests {
    @Test("Graceful shutdown shuts down the client the transport created, after it served")
    func gracefulShutdownStopsTheOwnedClient() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        let transport = AsyncHTTPClientTransport(
            configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await transport.run() }
                // The service runs: the client sends.
                let response = try await transport.send(
                    HTTPRequest(url: server.url("/jobs")), context: realContext())
                #expect(response.status == 200)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        // Shut down by run(): a second shutdown of the client says so.
        await #expect(throws: HTTPClientError.alreadyShutdown) { try await transport.client.shutdown() }
    }

    @Test("Cancelling the service's task shuts the owned client down too")
    func cancellationStopsTheOwnedClient() async throws {
        let transport = AsyncHTTPClientTransport(
            configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let task = Task { try await testGracefulShutdown { _ in try await transport.run() } }
        task.cancel()
        try await task.value
        await #expect(throws: HTTPClientError.alreadyShutdown) { try await transport.client.shutdown() }
    }

    @Test("A client passed in is left running after the service's shutdown: the transport does not own it")
    func passedInClientKeepsRunning() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let transport = AsyncHTTPClientTransport(client: client)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await transport.run() }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        let response = try await transport.send(HTTPRequest(url: server.url("/jobs")), context: realContext())
        #expect(response.status == 200)
        try await client.shutdown()  // still ours to shut down: it was not shut down by the service
    }

    @Test("The client the transport creates has AsyncHTTPClient's own tracing off; a client passed in keeps its own")
    func createdClientDoesNotTrace() async throws {
        try await withTransport { transport in
            #expect(transport.client.tracer == nil)
        }
        #expect(AsyncHTTPClientTransport.clientConfiguration(for: .standard).tracing.tracer == nil)
        #expect(HTTPClient.Configuration().tracing.tracer != nil)  // AsyncHTTPClient's default: the global tracer
    }
}
