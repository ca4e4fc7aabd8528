import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

@Suite("JSON API source")
struct JSONAPISourceTests {
    struct Job: Decodable, Sendable, Equatable {
        var id: Int
        var title: String
    }

    struct LeverPage: Decodable, Sendable {
        var data: [Job]
        var next: String?
        var hasNext: Bool
    }

    static let board = URL(string: "https://boards.example.com/v1/boards/acme/jobs")!
    let context = ResilienceContext(key: "greenhouse-acme", operation: "fetch")

    func greenhouse(_ transport: ScriptedHTTPTransport, notFoundMeansEmpty: Bool = false) -> JSONAPISource<Job> {
        JSONAPISource<Job>(id: "greenhouse-acme", transport: transport, notFoundMeansEmpty: notFoundMeansEmpty) {
            query, _ in
            var components = URLComponents(url: Self.board, resolvingAgainstBaseURL: false)!
            if !query.text.isEmpty { components.queryItems = [URLQueryItem(name: "q", value: query.text)] }
            return HTTPRequest(url: components.url!)
        }
    }

    @Test("Decodes a top-level array and builds the request from the query")
    func decodesArray() async throws {
        let transport = ScriptedHTTPTransport(sequence: [.json(#"[{"id":1,"title":"iOS"},{"id":2,"title":"Go"}]"#)])
        let jobs = try await greenhouse(transport).fetch(SourceQuery(text: "swift dev"), context: context)
        #expect(jobs == [Job(id: 1, title: "iOS"), Job(id: 2, title: "Go")])
        #expect(transport.requests.map(\.url.absoluteString) == [Self.board.absoluteString + "?q=swift%20dev"])
        #expect(greenhouse(transport).kind == .jsonAPI)
    }

    @Test("Non-2xx responses throw HTTPStatusError with the response")
    func statusErrors() async throws {
        let transport = ScriptedHTTPTransport(sequence: [.status(503, headers: ["Retry-After": "30"], body: "busy")])
        let error = try await #require(throws: HTTPStatusError.self) {
            try await greenhouse(transport).fetch(SourceQuery(), context: context)
        }
        #expect(error.status == 503)
        #expect(error.response.headers["Retry-After"] == "30")
        #expect(error.request?.url == Self.board)
    }

    @Test("404 means no items only when configured")
    func notFound() async throws {
        let transport = ScriptedHTTPTransport(sequence: [.status(404)])
        #expect(
            try await greenhouse(transport, notFoundMeansEmpty: true).fetch(SourceQuery(), context: context).isEmpty)
        let error = try await #require(throws: HTTPStatusError.self) {
            try await greenhouse(transport).fetch(SourceQuery(), context: context)
        }
        #expect(error.status == 404)
    }

    @Test("Undecodable bodies throw a typed decodingFailed error with the coding path, never []")
    func decodingFailed() async throws {
        let deeplyNested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        for body in [#"{"jobs": []}"#, #"[{"id":"one","title":"x"}]"#, "<html>oops</html>", "", deeplyNested] {
            let transport = ScriptedHTTPTransport(sequence: [.json(body)])
            let error = try await #require(throws: JSONAPISourceError.self) {
                try await greenhouse(transport).fetch(SourceQuery(), context: context)
            }
            #expect(error.code == .decodingFailed)
            #expect(error.classification.code == .decodingFailed)
            #expect(error.classification.category == .invalidResponse)
            #expect(!error.classification.isTransient)
        }
        let transport = ScriptedHTTPTransport(sequence: [.json(#"[{"id":"one","title":"x"}]"#)])
        let error = try await #require(throws: JSONAPISourceError.self) {
            try await greenhouse(transport).fetch(SourceQuery(), context: context)
        }
        #expect(error.detail.hasPrefix("[0].id"))
    }

    @Test("A hostile dictionary key in the coding path is cut and cleaned: the detail stays short, on one line")
    func decodingFailedBoundsHostileKeys() async throws {
        struct Board: Decodable, Sendable { var departments: [String: [Job]] }
        let key = "\\nFAKE LOG LINE " + String(repeating: "k", count: 1_000_000)
        let transport = ScriptedHTTPTransport(sequence: [
            .json(#"{"departments": {""# + key + #"": [{"id": "one", "title": "x"}]}}"#)
        ])
        let source = JSONAPISource<Job>(
            id: "greenhouse-acme", transport: transport, envelope: Board.self,
            items: { $0.departments.values.flatMap(\.self) }
        ) { _, _ in HTTPRequest(url: Self.board) }
        let error = try await #require(throws: JSONAPISourceError.self) {
            try await source.fetch(SourceQuery(), context: context)
        }
        #expect(error.detail.unicodeScalars.count <= 402, "detail has \(error.detail.unicodeScalars.count) scalars")
        #expect(error.description.unicodeScalars.count <= 450)
        #expect(!error.detail.contains("\n"))
        #expect(error.detail.hasPrefix(".departments.FAKE LOG LINE kkk"))
        #expect(error.detail.contains("…[0].id: "))
    }

    @Test("Page-numbered pagination stops at an empty page and is bounded")
    func pageNumbers() async throws {
        let transport = ScriptedHTTPTransport()
        for page in 1...3 {
            transport.script("https://api.example.com/jobs?page=\(page)", [.json(#"[{"id":\#(page),"title":"p"}]"#)])
        }
        transport.script("https://api.example.com/jobs?page=4", [.json("[]")])
        func source(maximumPages: Int) -> JSONAPISource<Job> {
            JSONAPISource<Job>(
                id: "paged", transport: transport, pagination: .pageNumbers(maximumPages: maximumPages)
            ) { _, page in HTTPRequest(url: URL(string: "https://api.example.com/jobs?page=\(page.number)")!) }
        }
        #expect(try await source(maximumPages: 10).fetch(SourceQuery(), context: context).map(\.id) == [1, 2, 3])
        #expect(transport.requests.count == 4)
        #expect(try await source(maximumPages: 2).fetch(SourceQuery(), context: context).map(\.id) == [1, 2])
        #expect(try await source(maximumPages: 10).fetch(SourceQuery(limit: 2), context: context).map(\.id) == [1, 2])
    }

    @Test("Page numbers starting at Int.max end after that page instead of overflowing")
    func pageNumbersEndAtIntMax() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script("https://api.example.com/jobs?page=\(Int.max)", [.json(#"[{"id":1,"title":"last"}]"#)])
        let source = JSONAPISource<Job>(
            id: "paged", transport: transport, pagination: .pageNumbers(startingAt: .max, maximumPages: 5)
        ) { _, page in HTTPRequest(url: URL(string: "https://api.example.com/jobs?page=\(page.number)")!) }
        #expect(try await source.fetch(SourceQuery(), context: context).map(\.id) == [1])
        #expect(transport.requests.count == 1)
    }

    @Test("Cursor pagination follows the envelope's cursor and stops on a repeat")
    func cursors() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(
            "https://api.example.com/postings", [.json(#"{"data":[{"id":1,"title":"a"}],"next":"c2","hasNext":true}"#)])
        transport.script(
            "https://api.example.com/postings?offset=c2",
            [.json(#"{"data":[{"id":2,"title":"b"}],"next":"c2","hasNext":true}"#)])
        let lever = JSONAPISource<Job>(
            id: "lever-globex", transport: transport, pagination: .cursor(maximumPages: 5), envelope: LeverPage.self,
            items: \.data, nextCursor: \.next, hasMore: \.hasNext
        ) { _, page in
            HTTPRequest(
                url: URL(string: "https://api.example.com/postings" + (page.cursor.map { "?offset=\($0)" } ?? ""))!)
        }
        #expect(try await lever.fetch(SourceQuery(), context: context).map(\.id) == [1, 2])
        #expect(transport.requests.count == 2)
    }

    @Test("An expired deadline or a cancelled task stops before sending")
    func deadlineAndCancellation() async throws {
        let clock = ManualClock()
        let time = ResilienceClock.manual(clock)
        let transport = ScriptedHTTPTransport(sequence: [.json("[]", after: .seconds(60))], clock: time)
        clock.advance(by: .seconds(10))
        let expired = ResilienceContext(key: "k", deadline: ResilienceInstant(offset: .seconds(5)), clock: time)
        let error = try await #require(throws: ResilienceError.self) {
            try await greenhouse(transport).fetch(SourceQuery(), context: expired)
        }
        #expect(error.code == .deadlineExceeded)
        #expect(transport.requests.isEmpty)

        let source = greenhouse(transport)
        let live = ResilienceContext(key: "k", clock: time)
        let task = Task { try await source.fetch(SourceQuery(), context: live) }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

@Suite("Feed source")
struct FeedSourceTests {
    static let url = URL(string: "https://boards.example.com/acme/feed.rss")!
    let context = ResilienceContext(key: "acme-rss")

    @Test("Fetches and parses a feed, filtering by query text and limit")
    func fetchesFeed() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(Self.url.absoluteString, [.status(200, body: FeedFixtures.greenhouseRSS)])
        let feed = FeedSource(id: "acme-rss", url: Self.url, transport: transport)
        #expect(try await feed.fetch(SourceQuery(), context: context).count == 3)
        #expect(try await feed.fetch(SourceQuery(text: "swift"), context: context).map(\.id).count == 2)
        #expect(try await feed.fetch(SourceQuery(text: "CAFE"), context: context).count == 1)
        #expect(try await feed.fetch(SourceQuery(limit: 1), context: context).count == 1)
        #expect(feed.kind == .feed)

        let titles = FeedSource<String>(id: "t", url: Self.url, transport: transport) { item in
            item.title.contains("Office") ? nil : item.title.uppercased()
        }
        #expect(
            try await titles.fetch(SourceQuery(), context: context) == [
                "SENIOR IOS ENGINEER (SWIFT)", "BACKEND ENGINEER — PLATFORM",
            ])
    }

    @Test("HTTP failures and malformed feeds are typed failures, never an empty list")
    func failures() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script("https://x.example/500", [.status(500, body: "boom")])
        transport.script("https://x.example/bad", [.status(200, body: FeedFixtures.truncated)])
        transport.script("https://x.example/empty", [.status(200, body: "")])
        let broken = FeedSource(id: "a", url: URL(string: "https://x.example/500")!, transport: transport)
        await #expect(throws: HTTPStatusError.self) { try await broken.fetch(SourceQuery(), context: context) }
        for path in ["bad", "empty"] {
            let feed = FeedSource(id: "b", url: URL(string: "https://x.example/\(path)")!, transport: transport)
            let error = try await #require(throws: FeedError.self) {
                try await feed.fetch(SourceQuery(), context: context)
            }
            #expect(context.classify(error).code == .malformedFeed)
        }
    }
}
