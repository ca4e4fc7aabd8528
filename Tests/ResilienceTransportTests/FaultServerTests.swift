import Foundation
import Testing

@testable import ResilienceTesting

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The loopback FaultServer itself, checked byte by byte with a raw socket client (real sockets, real time
/// with generous bounds).
@Suite("FaultServer", .serialized)
struct FaultServerTests {
    @Test("A status sequence answers in order, repeats its last step, and records every request")
    func statusSequence() async throws {
        let starting = ContinuousClock.now
        let server = try FaultServer()
        #expect(ContinuousClock.now - starting < .seconds(1), "the issue asks for well under a second")
        defer { server.stop() }
        server.script("/jobs", .status(503), .status(503), .ok("[]"))
        let client = RawHTTPClient(port: server.port)
        var statuses: [Int?] = []
        for _ in 0..<4 { statuses.append(await client.get("/jobs?page=2", headers: ["X-Trace": "abc"]).statusCode) }
        #expect(statuses == [503, 503, 200, 200])
        #expect(server.requestCount == 4)
        #expect(server.requestCount(for: "/jobs") == 4)
        let first = try #require(server.requests.first)
        #expect(first.method == "GET")
        #expect(first.path == "/jobs")
        #expect(first.query == "page=2")
        #expect(first.headers["x-trace"] == "abc")
        #expect(server.requests.map(\.sequenceNumber) == [1, 2, 3, 4])
    }

    @Test("Unscripted paths get 404; bodies and headers are recorded")
    func recordsBodies() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let client = RawHTTPClient(port: server.port)
        let reply = await client.request(
            "POST", "/nowhere", body: #"{"a":1}"#, headers: ["Content-Type": "application/json"])
        #expect(reply.statusCode == 404)
        let recorded = try #require(server.requests(to: "/nowhere").first)
        #expect(recorded.method == "POST")
        #expect(String(decoding: recorded.body, as: UTF8.self) == #"{"a":1}"#)
        #expect(recorded.headers["content-type"] == "application/json")
    }

    @Test("A client speaking something else than HTTP (a TLS hello) is disconnected and not recorded")
    func nonHTTPClient() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let reply = await RawHTTPClient(port: server.port).exchange("\u{16}\u{03}\u{01}\u{02}\u{00}hello", timeout: 3)
        #expect(reply.bytes.isEmpty)
        #expect(!reply.timedOut)
        #expect(server.requestCount == 0)
    }

    @Test("429 carries Retry-After; a redirect carries Location")
    func rateLimitAndRedirect() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/limited", .rateLimited(retryAfter: "7"))
        server.script("/moved", .redirect(to: "/elsewhere", status: 307))
        let client = RawHTTPClient(port: server.port)
        let limited = await client.get("/limited")
        #expect(limited.statusCode == 429)
        #expect(limited.header("Retry-After") == "7")
        let moved = await client.get("/moved")
        #expect(moved.statusCode == 307)
        #expect(moved.header("Location") == "/elsewhere")
    }

    @Test("reset closes with a TCP RST; empty reply closes cleanly; garbage is not HTTP")
    func connectionFaults() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/reset", .reset)
        server.script("/empty", .emptyReply)
        server.script("/garbage", .garbage())
        let client = RawHTTPClient(port: server.port)
        let reset = await client.get("/reset")
        #expect(reset.bytes.isEmpty)
        #expect(reset.endError == ECONNRESET)
        let empty = await client.get("/empty")
        #expect(empty.bytes.isEmpty)
        #expect(empty.endError == 0)
        let garbage = await client.get("/garbage")
        #expect(!garbage.bytes.isEmpty)
        #expect(garbage.statusCode == nil)
    }

    @Test("truncated declares more than it sends, then closes")
    func truncatedBody() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/cut", .truncated(body: Data("{\"jobs\":".utf8), declaredLength: 100))
        let reply = await RawHTTPClient(port: server.port).get("/cut")
        #expect(reply.statusCode == 200)
        #expect(reply.header("Content-Length") == "100")
        #expect(reply.body.count == 8)
        #expect(reply.endError == 0)
    }

    @Test("hang never answers and frees its connection when the client leaves or the server stops")
    func hangs() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        let reply = await RawHTTPClient(port: server.port).get("/stall", timeout: 0.3)
        #expect(reply.timedOut)
        #expect(reply.bytes.isEmpty)
        #expect(await eventually(seconds: 8) { server.openConnectionCount == 0 })
    }

    @Test("stop() ends a hanging exchange promptly and closes the listener")
    func stopClosesEverything() async throws {
        let server = try FaultServer()
        server.script("/stall", .hang)
        let port = server.port
        let finished = LockedBox<RawHTTPClient.Reply?>(nil)
        Task {
            let reply = await RawHTTPClient(port: port).get("/stall", timeout: 10)
            finished.mutate { $0 = reply }
        }
        #expect(await eventually(seconds: 8) { server.requestCount == 1 })
        let started = ContinuousClock.now
        server.stop()
        #expect(await eventually(seconds: 8) { finished.value != nil })
        #expect(ContinuousClock.now - started < .seconds(8), "the client would wait 10 s for the stall otherwise")
        #expect(!server.isRunning)
        #expect(
            await eventually(seconds: 8) { await RawHTTPClient(port: port).get("/", timeout: 0.5).statusCode == nil })
    }

    @Test("Fixed latency and slow drip take real time; the drip delivers the whole body")
    func latencyAndDrip() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/slow", .delayed(by: .milliseconds(200), then: .ok("late")))
        server.script("/drip", .slowDrip(body: Data("abcdef".utf8), chunkSize: 2, interval: .milliseconds(100)))
        let client = RawHTTPClient(port: server.port)
        var started = ContinuousClock.now
        let slow = await client.get("/slow")
        #expect(ContinuousClock.now - started >= .milliseconds(190))
        #expect(String(decoding: slow.body, as: UTF8.self) == "late")
        started = ContinuousClock.now
        let drip = await client.get("/drip")
        #expect(ContinuousClock.now - started >= .milliseconds(190))
        #expect(String(decoding: drip.body, as: UTF8.self) == "abcdef")
    }

    @Test("Random latency stays within its range")
    func randomLatency() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jitter", .randomlyDelayed(between: .milliseconds(50), and: .milliseconds(150), then: .ok("j")))
        let client = RawHTTPClient(port: server.port)
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let reply = await client.get("/jitter")
            let elapsed = ContinuousClock.now - started
            #expect(String(decoding: reply.body, as: UTF8.self) == "j")
            #expect(elapsed >= .milliseconds(45))
            #expect(elapsed < .seconds(5))
        }
    }

    @Test("The gzip bomb is small on the wire and its CRC matches a byte-by-byte CRC")
    func gzipBomb() async throws {
        for size in [1, 2, 3, 100, 258, 259, 1000, 4097, 10_000, 123_457] {
            #expect(GzipBomb.crc32OfZeros(count: size) == GzipBomb.crc32([UInt8](repeating: 0, count: size)))
        }
        let bomb = GzipBomb.make(decompressedSize: 10 * 1024 * 1024)
        #expect(bomb.count < 100 * 1024)
        #expect(Array(bomb.prefix(3)) == [0x1F, 0x8B, 0x08])
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/bomb", .gzipBomb(decompressedSize: 10 * 1024 * 1024))
        let reply = await RawHTTPClient(port: server.port).get("/bomb")
        #expect(reply.header("Content-Encoding") == "gzip")
        #expect(reply.body == bomb)
    }

    @Test("A huge body declares its size and streams without the server buffering it")
    func hugeBody() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/huge", .hugeBody(size: 200 * 1024 * 1024))
        let reply = await RawHTTPClient(port: server.port).get("/huge", maximumBytes: 512 * 1024)
        #expect(reply.header("Content-Length") == String(200 * 1024 * 1024))
        #expect(reply.bytes.count >= 512 * 1024)
    }

    @Test("Malformed JSON and XML are served as 200 with bodies that do not parse")
    func malformedBodies() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/json", .malformedJSON)
        server.script("/xml", .malformedXML)
        let client = RawHTTPClient(port: server.port)
        let json = await client.get("/json")
        #expect(json.statusCode == 200)
        #expect((try? JSONSerialization.jsonObject(with: json.body)) == nil)
        let xml = await client.get("/xml")
        #expect(xml.statusCode == 200)
        let parser = XMLParser(data: xml.body)
        let parsed = parser.parse()
        #expect(!parsed || parser.parserError != nil)
    }

    @Test("The mutation sink applies each Idempotency-Key once and replays the original status")
    func mutationSink() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .status(503), .mutationSink(status: 201, afterFirstApply: .reset))
        let client = RawHTTPClient(port: server.port)
        #expect(
            await client.request("POST", "/events", body: "{}", headers: ["Idempotency-Key": "k1"]).statusCode == 503)
        let lost = await client.request("POST", "/events", body: "{}", headers: ["Idempotency-Key": "k1"])
        #expect(lost.statusCode == nil)
        let replay = await client.request("POST", "/events", body: "{}", headers: ["Idempotency-Key": "k1"])
        #expect(replay.statusCode == 201)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(
            await client.request("PUT", "/events", body: "{}", headers: ["Idempotency-Key": "k2"]).statusCode == nil)
        #expect(
            await client.request("DELETE", "/events", body: "", headers: ["Idempotency-Key": "k2"]).statusCode == 201)
        #expect(await client.request("POST", "/events", body: "{}").statusCode == 201)
        #expect(await client.request("POST", "/events", body: "{}").statusCode == 201)
        #expect(server.appliedEffects == ["k1": 1, "k2": 1])
        #expect(server.unkeyedEffects == 2)
    }

    @Test("Seeded chaos is reproducible and close to its probabilities")
    func seededChaos() async throws {
        func outcomes(seed: UInt64) async throws -> [Int?] {
            var configuration = FaultServerConfiguration()
            configuration.seed = seed
            let server = try FaultServer(configuration: configuration)
            defer { server.stop() }
            var profile = ChaosProfile()
            profile.serviceUnavailable = 0.3
            profile.emptyReply = 0.2
            server.script("/chaos", .chaos(profile))
            let client = RawHTTPClient(port: server.port)
            var statuses: [Int?] = []
            for _ in 0..<200 { statuses.append(await client.get("/chaos").statusCode) }
            return statuses
        }
        let first = try await outcomes(seed: 42)
        let second = try await outcomes(seed: 42)
        #expect(second == first)
        let unavailable = first.filter { $0 == 503 }.count
        let empty = first.filter { $0 == nil }.count
        #expect((35...85).contains(unavailable))
        #expect((20...60).contains(empty))
        #expect(first.filter { $0 == 200 }.count + unavailable + empty == 200)
    }

    @Test("It stops by itself after its lifetime and after its request limit")
    func boundedLifetime() async throws {
        var shortLived = FaultServerConfiguration()
        shortLived.lifetime = .milliseconds(200)
        let server = try FaultServer(configuration: shortLived)
        #expect(await eventually(seconds: 8) { !server.isRunning })
        var limited = FaultServerConfiguration()
        limited.maximumRequests = 2
        let counted = try FaultServer(configuration: limited)
        let client = RawHTTPClient(port: counted.port)
        _ = await client.get("/a")
        _ = await client.get("/b")
        #expect(await eventually(seconds: 8) { !counted.isRunning })
        #expect(counted.requestCount == 2)
    }

    @Test("The request that reaches the limit is answered; the server stops after it")
    func requestAtTheLimitIsAnswered() async throws {
        var limited = FaultServerConfiguration()
        limited.maximumRequests = 2
        let server = try FaultServer(configuration: limited)
        defer { server.stop() }
        server.script("/a", .ok("answered"))
        let client = RawHTTPClient(port: server.port)
        #expect(await client.get("/a").statusCode == 200)
        #expect(await client.get("/a").statusCode == 200)
        #expect(await eventually(seconds: 8) { !server.isRunning })
        #expect(server.requestCount == 2)
    }

    @Test("Starting over at its bounds: every request answered, the scripts replayed, the log emptied, totals kept")
    func startsOverAtBounds() async throws {
        var configuration = FaultServerConfiguration()
        configuration.maximumRequests = 3
        configuration.startsOverAtBounds = true
        let limited = try FaultServer(configuration: configuration)
        defer { limited.stop() }
        limited.script("/once", .ok("first"), .status(429))
        let client = RawHTTPClient(port: limited.port)
        var statuses: [Int?] = []
        for _ in 0..<7 { statuses.append(await client.get("/once").statusCode) }
        // Requests 1-3, 4-6 and 7 each begin with the script's first answer; the third of each is answered too.
        #expect(statuses == [200, 429, 429, 200, 429, 429, 200])
        #expect(limited.isRunning)
        #expect(limited.requestCount == 7)
        #expect(limited.requestCount(for: "/once") == 7)
        #expect(limited.requests.count == 1)
        configuration.maximumRequests = 100
        configuration.lifetime = .seconds(1)
        let shortLived = try FaultServer(configuration: configuration)
        defer { shortLived.stop() }
        shortLived.script("/once", .ok("first"), .status(429))
        let shortLivedClient = RawHTTPClient(port: shortLived.port)
        #expect(await shortLivedClient.get("/once").statusCode == 200)
        #expect(await shortLivedClient.get("/once").statusCode == 429)
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(shortLived.isRunning)
        #expect(await shortLivedClient.get("/once").statusCode == 200)
        #expect(shortLived.requestCount == 3)
        #expect(shortLived.requests.count == 1)
    }
}

/// Polls `condition` every 10 ms of real time for up to `seconds`, without blocking a cooperative thread.
func eventually(seconds: Double, _ condition: () async -> Bool) async -> Bool {
    let end = ContinuousClock.now.advanced(by: .seconds(seconds))
    while ContinuousClock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
