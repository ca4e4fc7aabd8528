import AsyncHTTPClient
import Foundation
import NIOCore
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// What bounds a streamed body: the byte cap per event a consumer buffers (not per stream), and the idle
/// timeout between chunks. Over the loopback FaultServer with real sockets; the idle timeout runs on a
/// `ManualClock`, with a real-time bound only so that a missing timeout fails instead of hanging.
@Suite("Streamed body limits")
struct StreamedBodyLimitsTests {
    /// A stream of small events more than 11 MB long, past the default 10 MB cap, and how many events it holds.
    static let longEventStream: (body: Data, count: Int) = {
        let event = "data: " + String(repeating: "x", count: 100) + "\n\n"
        let count = (11 * 1024 * 1024) / event.utf8.count + 1
        return (Data(String(repeating: event, count: count).utf8), count)
    }()

    /// Streams `request` through a transport made with `configuration` and reads it as server-sent events until it
    /// ends or fails: how many events arrived, and the error that ended it.
    func readEvents(
        _ request: HTTPRequest, configuration: AsyncHTTPClientTransportConfiguration = .standard,
        timeout: Duration = .seconds(10)
    ) async throws -> (events: Int, error: (any Error)?) {
        try await withTransport(configuration) { transport in
            var events = 0
            let error = await failure {
                let response = try await transport.stream(request, context: realContext(timeout: timeout))
                for try await _ in ServerSentEvents(response.body) { events += 1 }
            }
            return (events, error)
        }
    }

    @Test("A server-sent event stream longer than the byte cap is read to its end: the cap bounds an event")
    func longEventStream() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let (body, count) = Self.longEventStream
        server.script("/events", .respond(status: 200, headers: ["Content-Type": "text/event-stream"], body: body))
        let (received, error) = try await readEvents(HTTPRequest(url: server.url("/events")), timeout: .seconds(30))
        #expect(error == nil, "\(String(describing: error))")
        #expect(received == count, "\(received) of \(count) events (\(body.count) bytes)")
    }

    @Test("A hostile 100 MB line without a newline, over the wire, ends in a typed error at the cap")
    func endlessLineOverTheWire() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .hugeBody(size: 100 * 1024 * 1024))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1024 * 1024
        let started = ContinuousClock.now
        let (events, error) = try await readEvents(
            HTTPRequest(url: server.url("/events")), configuration: configuration)
        let elapsed = ContinuousClock.now - started
        #expect(events == 0)
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
        #expect((error as? TransportError)?.url == server.url("/events"))
        #expect(elapsed < .seconds(5), "it stops at the cap, not after reading 100 MB")
    }

    @Test("An event stream longer than the cap from a server that compresses when asked to is read to its end")
    func longStreamFromACompressingServer() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let (body, count) = Self.longEventStream
        let headers: ResilienceCore.HTTPHeaders = ["Content-Type": "text/event-stream"]
        var compressed = headers
        compressed.add(name: "Content-Encoding", value: "gzip")
        // Like a real server, it compresses when the request accepts gzip (AsyncHTTPClient asks for
        // "deflate, gzip" when its decompression is on), and sends the body as it is otherwise.
        server.script(
            "/events",
            .requireHeader(
                "Accept-Encoding", oneOf: ["deflate, gzip", "gzip, deflate", "gzip"],
                then: .respond(status: 200, headers: compressed, body: gzipStored(body)),
                otherwise: .respond(status: 200, headers: headers, body: body)))
        let (received, error) = try await readEvents(HTTPRequest(url: server.url("/events")), timeout: .seconds(30))
        #expect(error == nil, "\(String(describing: error))")
        #expect(received == count, "\(received) of \(count) events (\(body.count) bytes)")
        #expect(server.requests(to: "/events").first?.headers["Accept-Encoding"] == "identity")
    }

    @Test("A caller's own Accept-Encoding on a stream is sent as it is")
    func callersAcceptEncoding() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .respond(status: 200, headers: ["Content-Type": "text/event-stream"]))
        try await withTransport { transport in
            let response = try await transport.stream(
                HTTPRequest(url: server.url("/events"), headers: ["Accept-Encoding": "br"]), context: realContext())
            for try await _ in response.body {}
        }
        #expect(server.requests(to: "/events").first?.headers["Accept-Encoding"] == "br")
    }

    @Test("A gzip bomb sent as one event, though the stream asked for no encoding, ends in a typed error at the cap")
    func gzipBombEvent() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .gzipBomb(decompressedSize: 100 * 1024 * 1024))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1024 * 1024
        let (events, error) = try await readEvents(
            HTTPRequest(url: server.url("/events")), configuration: configuration)
        #expect(events == 0)
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test("A gzip bomb as a buffered body is inflated no further than the cap: a typed error")
    func gzipBombBuffered() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/bomb", .gzipBomb(decompressedSize: 100 * 1024 * 1024))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1024 * 1024
        let error = await #expect(throws: (any Error).self) {
            try await withTransport(configuration) { transport in
                try await transport.send(HTTPRequest(url: server.url("/bomb")), context: realContext())
            }
        }
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test(
        "A server that compresses a stream it was asked not to: the stream ends at the cap, the inflater counts it whole"
    )
    func compressedStreamEndsAtCap() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/gzip", .chunkedBody(size: 2 * 1024 * 1024, gzip: true))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1024 * 1024
        let (received, error) = try await withTransport(configuration) { transport in
            var received = 0
            let error = await failure {
                let response = try await transport.stream(HTTPRequest(url: server.url("/gzip")), context: realContext())
                for try await chunk in response.body { received += chunk.count }
            }
            return (received, error)
        }
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
        #expect(received <= 1024 * 1024)
    }

    @Test("A stream that stalls after its first event ends with a transient timeout once it has been idle")
    func stalledStream() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script(
            "/events", .slowDrip(body: Data("data: 1\n\ndata: 2\n\n".utf8), chunkSize: 9, interval: .seconds(3600)))
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let context = ResilienceContext(
            key: "test", deadline: clock.now().advanced(by: .seconds(10)), clock: clock,
            classifier: TransportErrorClassifier.standard)
        let outcome = try await withTransport { transport in
            let response = try await transport.stream(HTTPRequest(url: server.url("/events")), context: context)
            let (firstEvent, signal) = AsyncStream<Void>.makeStream()
            let reader = Task { () -> (events: [ServerSentEvent], error: (any Error)?) in
                var events: [ServerSentEvent] = []
                let error = await failure {
                    for try await event in ServerSentEvents(response.body) {
                        events.append(event)
                        signal.yield()
                    }
                }
                return (events, error)
            }
            // Bounded in real time, so a stream without an idle timeout fails here instead of hanging the suite.
            return try await withDeadline(after: .seconds(10), clock: .continuous) {
                await withTaskCancellationHandler {
                    for await _ in firstEvent { break }
                    await manual.waitForSleepers(count: 1)
                    manual.advance(by: .seconds(60))
                    return await reader.value
                } onCancel: {
                    reader.cancel()
                }
            }
        }
        #expect(outcome.events == [ServerSentEvent(data: "1")])
        let classification = classify(outcome.error)
        #expect(classification?.category == .timeout, "\(String(describing: outcome.error))")
        #expect(classification?.code == .timedOut)
        #expect(classification?.isTransient == true)
    }

    @Test("The idle timeout restarts with every chunk: keep-alives hold a quiet stream open, silence ends it")
    func idleTimeoutPerChunk() async throws {
        let manual = ManualClock()
        let (chunks, feed) = AsyncStream<ByteBuffer>.makeStream()
        let url = URL(string: "https://example.com/events")!
        let body = ResponseBodyStream(
            body: .stream(chunks), unitLimit: 1 << 20, declaredLength: nil, url: url, idleTimeout: .seconds(60),
            clock: .manual(manual))
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let reader = Task { () -> (chunks: Int, error: (any Error)?) in
            var count = 0
            let error = await failure {
                for try await _ in body {
                    count += 1
                    arrived.yield()
                }
            }
            return (count, error)
        }
        var signals = arrivals.makeAsyncIterator()
        for _ in 0..<3 {
            await manual.waitForSleepers(count: 1)
            manual.advance(by: .seconds(59))
            feed.yield(ByteBuffer(string: ": keep-alive\n"))
            await signals.next()
        }
        await manual.waitForSleepers(count: 1)
        manual.advance(by: .seconds(60))
        let outcome = await reader.value
        #expect(outcome.chunks == 3, "a chunk 59 s after the last one arrives")
        let error = outcome.error as? TransportError
        #expect(
            error == TransportError.idleTimedOut(after: .seconds(60), url: url), "\(String(describing: outcome.error))")
        #expect(error?.classification.category == .timeout)
        #expect(error?.classification.isTransient == true)
        #expect(manual.now.offset == .seconds(3 * 59 + 60))
        feed.finish()
    }
}

/// `data` as a gzip member of stored (uncompressed) deflate blocks: a `Content-Encoding: gzip` body whose inflated
/// size is exactly `data.count`, without a compressor.
func gzipStored(_ data: Data) -> Data {
    var output = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
    let bytes = [UInt8](data)
    var offset = 0
    repeat {
        let length = min(65_535, bytes.count - offset)
        let final: UInt8 = offset + length == bytes.count ? 1 : 0
        output.append(final)
        output.append(contentsOf: [UInt8(length & 0xff), UInt8(length >> 8)])
        output.append(contentsOf: [UInt8(~length & 0xff), UInt8((~length >> 8) & 0xff)])
        output.append(contentsOf: bytes[offset..<offset + length])
        offset += length
    } while offset < bytes.count
    let table = (0..<256).map { index -> UInt32 in
        var entry = UInt32(index)
        for _ in 0..<8 { entry = entry & 1 == 1 ? (entry >> 1) ^ 0xedb8_8320 : entry >> 1 }
        return entry
    }
    var crc: UInt32 = 0xffff_ffff
    for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8) }
    crc ^= 0xffff_ffff
    for value in [crc, UInt32(truncatingIfNeeded: bytes.count)] {
        output.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    }
    return output
}
