import Foundation
import HTTPTypes
import Logging
import ResilienceAsyncHTTPClient
import ResilienceCore
import ResilienceKit
import ResilienceLogging
import ResilienceMetrics
import ResilienceOpenAPI
import ResiliencePostgreSQL
import ResilienceServiceLifecycle
import ResilienceTesting
import ResilienceTracing
import Testing

/// Calls each published package once, as an application that added them by URL would.
@Suite("The published packages, added by URL")
struct ConsumerTests {
    @Test("A request through the AsyncHTTPClient transport in a traced, retried pipeline, logged and counted")
    func transportPipelineAndTelemetry() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        let buffered = BufferedSink(
            capacity: 256,
            downstream: MultiplexingSink(
                LoggingTelemetrySink(logger: Logger(label: "consumer")), MetricsTelemetrySink()))
        let telemetry = Task { await BufferedSinkService(buffered).run() }
        let pipeline = Pipeline {
            TracingStrategy()
            RetryStrategy(policy: StandardRetryPolicy.standard)
        }
        let transport = AsyncHTTPClientTransport()
        let response = try await pipeline.execute(ResilienceContext(key: "jobs", telemetry: buffered)) { attempt in
            try await transport.send(ResilienceCore.HTTPRequest(url: server.url("/jobs")), context: attempt)
        }
        telemetry.cancel()
        await telemetry.value
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "[]")
    }

    @Test("An OpenAPI client transport over the AsyncHTTPClient transport")
    func openAPITransport() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        let transport = ResilienceClientTransport(AsyncHTTPClientTransport())
        let (response, _) = try await transport.send(
            HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs"), body: nil,
            baseURL: server.baseURL, operationID: "listJobs")
        #expect(response.status == .ok)
    }

    @Test("The PostgreSQL store refuses an empty key before it touches the database")
    func postgreSQLStore() async throws {
        let store = PostgresCoordinationStore(host: "127.0.0.1", username: "consumer", password: nil, database: nil)
        await #expect(throws: CoordinationStoreError.self) { _ = try await store.breakerRecord(key: "") }
    }
}
