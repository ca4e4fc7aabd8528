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
}
