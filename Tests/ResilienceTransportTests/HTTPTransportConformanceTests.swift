import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// The URLSession transport against ResilienceTesting's HTTPTransport kit, over real loopback sockets.
@Suite("HTTPTransportConformance", .serialized)
struct HTTPTransportConformanceTests {
    @Test("URLSessionTransport passes every case of the HTTPTransport kit")
    func urlSessionConforms() async {
        var configuration = URLSessionTransportConfiguration()
        configuration.maximumResponseSize = 1 << 20
        let kit = HTTPTransportConformance(
            URLSessionTransport(configuration: configuration), classifier: TransportErrorClassifier.standard,
            configuration: .init(responseCap: 1 << 20))
        let report = await kit.run()
        #expect(report.cases.map(\.name) == HTTPTransportConformance.allCases)
        #expect(report.conforms, "\(report)")
    }

    @Test("URLSessionTransport's default size limit refuses a gzip bomb and a huge body fast")
    func defaultSizeLimit() async {
        // 16 × the default 10 MB cap. On Linux, libcurl inflates ahead of the delegate without backpressure, so
        // the transient peak can exceed the cap (Docs/Transport.md); the typed error still comes promptly.
        let report = await HTTPTransportConformance(
            URLSessionTransport(), classifier: TransportErrorClassifier.standard,
            configuration: .init(responseCap: URLSessionTransportConfiguration().maximumResponseSize),
            cases: ["gzip-bomb", "huge-body"]
        ).run()
        #expect(report.conforms, "\(report)")
    }

    /// Throws for every status outside 2xx and forwards credentials everywhere: what a naive transport does.
    struct NaiveTransport: HTTPTransport {
        let inner = URLSessionTransport()
        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            let response = try await inner.send(request, context: context)
            guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
            return response
        }
    }

    @Test("The kit reports, case by case, a transport that throws statuses")
    func catchesANaiveTransport() async {
        let kit = HTTPTransportConformance(
            NaiveTransport(), classifier: TransportErrorClassifier.standard,
            cases: ["statuses-returned", "rate-limited-retry-after", "reset"])
        let report = await kit.run()
        #expect(report.failedCases == ["statuses-returned", "rate-limited-retry-after"], "\(report)")
        #expect(report.result("reset")?.passed == true)
        await #expect(throws: ConformanceFailure.self) { try await kit.check() }
    }

    /// Measures its deadline on the real clock whatever clock the context carries.
    struct WallClockTransport: HTTPTransport {
        let inner = URLSessionTransport()
        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            var context = context
            context.clock = .continuous
            context.deadline = context.clock.now().advanced(by: .seconds(2))
            return try await inner.send(request, context: context)
        }
    }

    @Test("The kit reports a transport whose deadline ignores the context's clock")
    func catchesAWallClockTransport() async {
        let report = await HTTPTransportConformance(
            WallClockTransport(), classifier: TransportErrorClassifier.standard,
            configuration: .init(slack: .seconds(1)), cases: ["deadline-on-context-clock", "reset"]
        ).run()
        #expect(report.failedCases == ["deadline-on-context-clock"], "\(report)")
    }
}
