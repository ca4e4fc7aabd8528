import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

@Suite("ResilientTransport with one pipeline for every host")
struct ResilientTransportOnePipelineTests {
    @Test("Every host's requests run through the one pipeline, which retries what the status validation rejects")
    func everyHostRunsThroughTheOnePipeline() async throws {
        let network = ScriptedHTTPTransport(sequence: [.status(503), .status(200), .status(200), .status(404)])
        let pipeline = TestOnlyRetryPipeline()
        let transport = ResilientTransport(wrapping: network, pipeline: pipeline)
        let context = ResilienceContext(key: "jobs")
        let first = try await transport.send(HTTPRequest(url: URL(string: "https://a.example/jobs")!), context: context)
        #expect(first.status == 200)
        let second = try await transport.send(HTTPRequest(url: URL(string: "https://b.example/x")!), context: context)
        #expect(second.status == 200)
        let error = await #expect(throws: HTTPStatusError.self) {
            try await transport.send(HTTPRequest(url: URL(string: "file:///no-host")!), context: context)
        }
        #expect(error?.response.status == 404)
        #expect(pipeline.attempts.value == 4)
        #expect(network.requests.map { $0.url.host ?? "" } == ["a.example", "a.example", "b.example", ""])
    }
}
