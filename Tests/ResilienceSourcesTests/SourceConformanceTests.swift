import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

/// The built-in sources pass the conformance kit, and the kit catches sources that break the contract.
@Suite("Source conformance kit")
struct SourceConformanceTests {
    struct Job: Decodable, Sendable {
        var id: Int
    }

    /// Swallows every failure into an empty list: the seeds' anti-pattern.
    struct SilentSource: Source {
        let id: SourceID = "silent"
        let kind: SourceKind = "silent"
        let displayName = "Silent"
        let transport: any HTTPTransport

        func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Int] {
            guard
                let response = try? await transport.send(
                    HTTPRequest(url: URL(string: "https://x.example")!), context: context),
                response.isSuccess
            else { return [] }
            return [response.body.count]
        }
    }

    @Test("FeedSource conforms")
    func feedConforms() async throws {
        let kit = SourceConformance(healthy: .status(200, body: FeedFixtures.leverAtom)) { transport in
            FeedSource(
                id: "globex-atom", url: URL(string: "https://jobs.example.org/globex.atom")!, transport: transport)
        }
        try await kit.check()
    }

    @Test("JSONAPISource conforms")
    func jsonConforms() async throws {
        let kit = SourceConformance(healthy: .json(#"[{"id":1}]"#)) { transport in
            JSONAPISource<Job>(id: "api", transport: transport) { _, _ in
                HTTPRequest(url: URL(string: "https://api.example.com/jobs")!)
            }
        }
        let report = await kit.run()
        #expect(report.conforms, "\(report)")
    }

    @Test("A source that swallows failures into [] is caught")
    func silentSourceViolates() async {
        let report = await SourceConformance(healthy: .status(200, body: "ok")) { SilentSource(transport: $0) }.run()
        #expect(!report.conforms)
        #expect(report.violations.contains { $0.description.hasPrefix("no-silent-empty: http-500") })
        #expect(report.violations.contains { $0.description.hasPrefix("no-silent-empty: connection-lost") })
        #expect(report.violations.contains { $0.description.hasPrefix("cancellation") })
        #expect(report.result("failure:http-500")?.passed == false)
        #expect(report.result("stable-id")?.passed == true)
        #expect(throws: ConformanceFailure.self) { try report.requireConformance() }
    }
}
