import Foundation
import ResilienceAsyncHTTPClient
import ResilienceTesting
import ResilienceTransport
import Testing

/// AsyncHTTPClientTransport against ResilienceTesting's HTTPTransport kit, the same kit URLSessionTransport
/// passes, over real loopback sockets.
@Suite("AsyncHTTPClientTransport conformance", .serialized)
struct AsyncHTTPClientConformanceTests {
    @Test("AsyncHTTPClientTransport passes every case of the HTTPTransport kit")
    func conforms() async throws {
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1 << 20
        let report = try await withTransport(configuration) { transport in
            await HTTPTransportConformance(
                transport, classifier: classifier, configuration: .init(responseCap: 1 << 20, concurrentRequests: 64)
            ).run()
        }
        #expect(report.cases.map(\.name) == HTTPTransportConformance.allCases)
        #expect(report.conforms, "\(report)")
    }

    @Test("The default size limit refuses a gzip bomb and a huge body fast")
    func defaultSizeLimit() async throws {
        let report = try await withTransport { transport in
            await HTTPTransportConformance(
                transport, classifier: classifier,
                configuration: .init(responseCap: AsyncHTTPClientTransportConfiguration().maximumResponseSize),
                cases: ["gzip-bomb", "huge-body"]
            ).run()
        }
        #expect(report.conforms, "\(report)")
    }

    private var classifier: CompositeErrorClassifier {
        CompositeErrorClassifier([TransportErrorClassifier.standard, AsyncHTTPClientErrorClassifier()])
    }
}
