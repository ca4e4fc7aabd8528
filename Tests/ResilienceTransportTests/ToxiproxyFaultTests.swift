import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// Toxiproxy's toxics as FaultServer faults, against the URLSession transport over real loopback sockets:
/// what the transport returns or how it classifies the failure. Bounds on real time are generous.
@Suite("Toxiproxy faults over loopback")
struct ToxiproxyFaultTests {
    let body = Data((0..<4_000).map { UInt8(truncatingIfNeeded: $0 % 26 + 97) })

    func send(
        _ server: FaultServer, _ path: String, timeout: Duration = .seconds(60)
    ) async -> Result<
        HTTPResponse, any Error
    > {
        do {
            return .success(
                try await sharedTransport.send(
                    HTTPRequest(url: server.url(path)), context: realContext(timeout: timeout)))
        } catch { return .failure(error) }
    }

    func elapsed<T>(_ body: () async -> T) async -> (T, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let value = await body()
        return (value, start.duration(to: clock.now))
    }

    @Test("latency: the answer arrives after the delay, intact")
    func latency() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/f", .latency(.milliseconds(300), jitter: .milliseconds(50)))
        let (result, took) = await elapsed { await send(server, "/f") }
        #expect(try result.get().status == 200)
        #expect(took >= .milliseconds(250))
    }

    @Test("bandwidth: the body arrives whole, at about the rate")
    func bandwidth() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/f", .bandwidth(bytesPerSecond: 10_000, body: body))
        let (result, took) = await elapsed { await send(server, "/f") }
        #expect(try result.get().body == body)
        #expect(took >= .milliseconds(300))
    }

    @Test("slow close: a response with a length is not held up by the late close")
    func slowClose() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        // The close comes 30 s after the response, so that a loaded machine's slowness (up to 10 s, seen when
        // the whole suite runs on two cores) cannot pass for waiting on it.
        server.script("/f", .slowClose(after: .seconds(30), then: .ok("done")))
        let (result, took) = await elapsed { await send(server, "/f") }
        #expect(try result.get().body == Data("done".utf8))
        #expect(took < .seconds(25))
    }

    @Test("timeout: a closed connection without an answer is an empty reply; an endless one hits the deadline")
    func timeout() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/closes", .timeout(after: .milliseconds(200)))
        server.script("/never", .timeout(after: nil))
        guard case .failure(let closed) = await send(server, "/closes") else {
            Issue.record("a closed connection returned a response")
            return
        }
        #expect(classify(closed)?.code == .emptyReply)
        guard case .failure(let never) = await send(server, "/never", timeout: .milliseconds(500)) else {
            Issue.record("a silent connection returned a response")
            return
        }
        #expect(classify(never)?.category == .timeout, "\(never)")
    }

    @Test("reset peer: the transport reports a connection reset")
    func resetPeer() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/f", .resetPeer(after: .milliseconds(100)))
        guard case .failure(let error) = await send(server, "/f") else {
            Issue.record("a reset connection returned a response")
            return
        }
        #expect(classify(error)?.code == .connectionReset)
    }

    @Test("slicer: the body arrives whole from many small slices")
    func slicer() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/f", .slicer(averageSize: 500, delay: .milliseconds(50), body: body))
        let (result, took) = await elapsed { await send(server, "/f") }
        #expect(try result.get().body == body)
        #expect(took >= .milliseconds(300))
    }

    @Test("limit data: a body cut short is a truncated response; one within the limit passes")
    func limitData() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/cut", .limitData(bytes: 1_000, body: body))
        server.script("/whole", .limitData(bytes: 10_000, body: body))
        guard case .failure(let error) = await send(server, "/cut") else {
            Issue.record("a cut body returned a response")
            return
        }
        #expect(classify(error)?.code == .truncatedResponse)
        #expect(try await send(server, "/whole").get().body == body)
    }

    @Test("A HEAD request gets the head alone from every fault that sends a body; the connection stays usable")
    func headGetsTheHeadAlone() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/sliced", .slicer(averageSize: 1_000, delay: .milliseconds(10), body: body))
        server.script("/huge", .hugeBody(size: 70_000))
        server.script("/chunked", .chunkedBody(size: 70_000))
        server.script("/bomb", .gzipBomb(decompressedSize: 1_000_000))
        server.script("/next", .ok("next"))
        let client = RawHTTPClient(port: server.port)
        for path in ["/sliced", "/huge", "/chunked", "/bomb"] {
            // A HEAD and a GET pipelined on one connection: what follows the HEAD's head is the GET's answer.
            let reply = await client.exchange(
                "HEAD \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    + "GET /next HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            #expect(reply.statusCode == 200)
            let afterHead = reply.body
            #expect(
                afterHead.starts(with: Data("HTTP/1.1 200".utf8)),
                "\(path): the HEAD's body came first")
            #expect(afterHead.suffix(4) == Data("next".utf8))
        }
    }
}
