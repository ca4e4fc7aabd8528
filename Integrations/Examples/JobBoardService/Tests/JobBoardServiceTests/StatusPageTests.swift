import Foundation
import ResilienceKit
import Testing

@testable import JobBoardService

/// The status page renders postings from upstreams: a link is a link only when it is http(s).
@Suite("Status page links")
struct StatusPageTests {
    @Test(
        "Only absolute http and https URLs become link targets",
        arguments: [
            ("https://jobs.example.com/1", "https://jobs.example.com/1"),
            ("http://127.0.0.1:8080/postings/2?ref=a&b=c", "http://127.0.0.1:8080/postings/2?ref=a&b=c"),
            ("HTTPS://Jobs.Example.com/3", "HTTPS://Jobs.Example.com/3"),
        ])
    func httpAndHTTPSAreLinks(text: String, target: String) {
        #expect(StatusPage.linkTarget(text) == target)
    }

    @Test(
        "Every other scheme, relative and scheme-relative references, and non-URLs are refused",
        arguments: [
            "javascript:alert(document.cookie)", "JavaScript:alert(1)", " javascript:alert(1)",
            "java\tscript:alert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)",
            "file:///etc/passwd", "ftp://jobs.example.com/1", "//evil.example/1", "/jobs/1", "jobs/1", "https://",
            "http:///no-host", "", "mailto:jobs@example.com",
        ])
    func otherTextIsNotALink(text: String) {
        #expect(StatusPage.linkTarget(text) == nil)
    }

    @Test("A javascript: posting is shown as text, never in an href; an https one is a link; all text is escaped")
    func renderedPage() throws {
        let json = #"""
            {"delivered": 1, "total": 1, "durationSeconds": 0.1, "sources": [], "jobs": [
              {"title": "Evil <b>job</b>", "company": "X", "location": "Y", "url": "javascript:alert(1)", "source": "s"},
              {"title": "Good job", "company": "X", "location": "Y", "url": "https://jobs.example.com/1?a=1&b=2",
               "source": "s"}]}
            """#
        let jobs = try JSONDecoder().decode(JobsResponse.self, from: Data(json.utf8))
        let health = try JSONDecoder().decode(
            HealthResponse.self, from: Data(#"{"status":"healthy","alerts":[]}"#.utf8))
        let html = StatusPage(jobs: jobs, health: health).html
        #expect(!html.lowercased().contains("javascript:"))
        #expect(html.contains("Evil &lt;b&gt;job&lt;/b&gt; <span class=\"muted\">(link withheld"))
        #expect(
            html.contains(
                #"<a href="https://jobs.example.com/1?a=1&amp;b=2" rel="noopener noreferrer nofollow">Good job</a>"#))
    }
}

/// Every upstream answers 500, so the page carries a message with an action to suggest.
private struct FailingTransport: HTTPTransport {
    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        HTTPResponse(status: 500, url: request.url)
    }
}

@Suite("Status page text")
struct StatusPageTextTests {
    @Test("When no source delivers, the page suggests what works in a browser: a reload link to the page itself")
    func actionIsAReloadLink() async throws {
        let service = JobBoardService(
            configuration: JobBoardServiceConfiguration(
                port: 0, boardsURL: URL(string: "https://boards.example.com")!,
                plaintextFeedsURL: URL(string: "https://feeds.example.com")!),
            logger: JobBoardServiceTests.silent, transport: FailingTransport())
        let jobs = try await service.fetchJobs()
        let message = try #require(jobs.message)
        #expect(message.showsRetry)
        let html = StatusPage(jobs: jobs, health: service.health()).html
        #expect(!html.lowercased().contains("pull"), "\(message)")
        #expect(html.contains(#"<a href="/">Reload the page</a>"#), "\(message)")
        #expect(message.suggestedAction == "Reload the page")
    }
}
