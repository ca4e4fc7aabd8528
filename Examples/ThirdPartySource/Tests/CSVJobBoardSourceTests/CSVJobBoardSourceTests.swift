import CSVJobBoardSource
import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

@Suite("CSV job board source (third-party example)")
struct CSVJobBoardSourceTests {
    static let url = URL(string: "https://initech.example.com/jobs.csv")!
    static let board = #"""
        title,company,location,url,posted
        iOS Engineer,Initech,Remote,https://initech.example.com/jobs/1,2026-03-01
        "Swift Engineer, Server",Initech,"Austin, TX",https://initech.example.com/jobs/2,2026-03-02
        "Says ""hello""",Initrode,Berlin,not a url,2026-03-03

        """#

    @Test("Passes the SourceConformance kit")
    func conformance() async throws {
        let kit = SourceConformance(healthy: .status(200, body: Self.board)) { transport in
            CSVJobBoardSource(id: "csv-initech", url: Self.url, transport: transport)
        }
        let report = await kit.run()
        #expect(report.conforms, "\(report)")
        #expect(report.cases.count >= 10)
        try report.requireConformance()
    }

    @Test("Parses quoted fields, doubled quotes, extra columns and CRLF")
    func parses() throws {
        let jobs = try CSVJobBoardParser().parse(Data(Self.board.replacingOccurrences(of: "\n", with: "\r\n").utf8))
        #expect(jobs.count == 3)
        #expect(jobs[1].title == "Swift Engineer, Server")
        #expect(jobs[1].location == "Austin, TX")
        #expect(jobs[2].title == #"Says "hello""#)
        #expect(jobs[2].url == nil)
        #expect(jobs[0].url == URL(string: "https://initech.example.com/jobs/1"))
    }

    @Test("Hostile bodies are typed errors")
    func hostile() {
        let parser = CSVJobBoardParser(maximumBytes: 1_000, maximumRows: 2)
        let cases: [(String, FailureCode)] = [
            ("", CSVJobBoardError.missingHeader),
            ("name,place\nx,y", CSVJobBoardError.missingColumn),
            ("title,company,location,url\na,b,c", CSVJobBoardError.malformedRow),
            ("title,company,location,url\n\"a,b,c,d", CSVJobBoardError.malformedRow),
            ("title,company,location,url\n" + String(repeating: "a,b,c,d\n", count: 3), CSVJobBoardError.tooLarge),
            (String(repeating: "x", count: 2_000), CSVJobBoardError.tooLarge),
        ]
        for (body, code) in cases {
            #expect(throws: CSVJobBoardError.self) { try parser.parse(Data(body.utf8)) }
            #expect((try? parser.parse(Data(body.utf8))) == nil)
            do {
                _ = try parser.parse(Data(body.utf8))
            } catch {
                #expect((error as? CSVJobBoardError)?.code == code, "\(body.prefix(30))")
                #expect((error as? CSVJobBoardError)?.classification.category == .invalidResponse)
            }
        }
    }

    @Test("Registered from outside into an Aggregator next to built-in sources")
    func registersInAggregator() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(Self.url.absoluteString, [.status(200, body: Self.board)])
        var aggregator = Aggregator<String>(configuration: AggregatorConfiguration(sourceTimeout: nil))
        aggregator.register(
            CSVJobBoardSource(id: "csv-initech", url: Self.url, transport: transport).mapItems { $0.title },
            pipeline: PassthroughPipeline(), timeout: .seconds(5))
        aggregator.register(ScriptedSource(id: "other", items: ["Other job"]))
        #expect(aggregator.configurationDescription.contains("csv-initech [csv-job-board] timeout: 5.0 seconds"))
        let result = try await aggregator.fetch(SourceQuery(text: "swift"))
        #expect(result.items == ["Swift Engineer, Server", "Other job"])
        #expect(CSVJobBoardSource(id: "x", url: Self.url, transport: transport).kind == .csvJobBoard)
    }
}
