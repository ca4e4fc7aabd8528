import AsyncHTTPClient
import Foundation
import ResilienceAsyncHTTPClient
import ResilienceTesting
import ResilienceTransport

/// The classification of an error the way a pipeline would see it.
func classify(_ error: (any Error)?) -> FailureClassification? {
    guard let error else { return nil }
    return CompositeErrorClassifier([TransportErrorClassifier.standard, AsyncHTTPClientErrorClassifier()])
        .classification(of: error)
}

/// A context on the real continuous clock with an attempt deadline `timeout` from now.
func realContext(timeout: Duration = .seconds(10), telemetry: (any TelemetrySink)? = nil) -> ResilienceContext {
    let clock = ResilienceClock.continuous
    return ResilienceContext(
        key: "test", deadline: clock.now().advanced(by: timeout), telemetry: telemetry, clock: clock,
        classifier: TransportErrorClassifier.standard)
}

/// Runs `body` with a transport of its own (its own connection pool), shut down afterwards.
func withTransport<T>(
    _ configuration: AsyncHTTPClientTransportConfiguration = .standard,
    _ body: (AsyncHTTPClientTransport) async throws -> T
) async throws -> T {
    let transport = AsyncHTTPClientTransport(
        configuration: configuration, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    do {
        let result = try await body(transport)
        try await transport.shutdown()
        return result
    } catch {
        try await transport.shutdown()
        throw error
    }
}
