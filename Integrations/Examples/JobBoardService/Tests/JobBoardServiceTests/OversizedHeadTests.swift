import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import JobBoardService

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Requests whose head exceeds the HTTP/1 decoder's limits (80 KiB, 1,000 fields), on a live 127.0.0.1 socket:
/// 414 for the request line, 431 for the header fields, the connection closed after the answer. Real sockets
/// and real time, generous bounds.
@Suite("Oversized request heads", .serialized)
struct OversizedHeadTests {
    /// Sends `text` on a new connection to 127.0.0.1:`port` and reads until the server closes it (or `bound`).
    ///
    /// - Returns: What the server sent, and whether it closed the connection (end of stream) within `bound`.
    static func exchange(port: Int, _ text: String, bound: Int = 20) throws -> (response: String, closed: Bool) {
        let descriptor = try LoopbackSocket.open(port: port)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: bound, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, noSignal) }
            if written <= 0 { break }  // the server stopped reading or closed: read what it answered
            sent += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if count < 0 { return (String(decoding: received, as: UTF8.self), false) }
            received += buffer[..<count]
        }
    }

    #if canImport(Glibc)
    static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    static let noSignal: Int32 = 0
    #endif

    /// The status codes of the responses in `response`, in order.
    static func statuses(_ response: String) -> [Int] {
        response.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    /// Runs `body` with the port of a live service, on a thread of its own (its sockets block).
    static func live<T: Sendable>(_ body: @escaping @Sendable (Int) throws -> T) async throws -> T {
        try await JobBoardServiceTests.withService { service in
            try await service.makeApplication().test(.live) { client in
                let port = try #require(client.port)
                return try await Task.detached { try body(port) }.value
            }
        }
    }

    @Test("A request line over the limit: 414 URI Too Long, Connection: close, and the connection closed")
    func uriTooLong() async throws {
        let path = "/" + String(repeating: "a", count: 100_000)
        let (response, closed) = try await Self.live { port in
            try Self.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        }
        #expect(Self.statuses(response) == [414], "\(response.prefix(300))")
        #expect(response.lowercased().contains("connection: close"), "\(response.prefix(300))")
        #expect(closed, "the connection was still open 20 s after the answer")
    }

    @Test(
        "A header field over the limit, or too many fields: 431 Request Header Fields Too Large, then closed",
        arguments: [
            "Cookie: session=" + String(repeating: "c", count: 100_000) + "\r\n",
            (0..<1_100).map { "X-Field-\($0): \($0)\r\n" }.joined(),
        ])
    func headerFieldsTooLarge(fields: String) async throws {
        let (response, closed) = try await Self.live { port in
            try Self.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)\r\n")
        }
        #expect(Self.statuses(response) == [431], "\(response.prefix(300))")
        #expect(response.lowercased().contains("connection: close"), "\(response.prefix(300))")
        #expect(closed, "the connection was still open 20 s after the answer")
    }

    @Test(
        "Behind a request on the same connection: its answer first, then 414 or 431, then closed",
        arguments: [
            ("GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
            (
                "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + String(repeating: "b", count: 100_000)
                    + "\r\n\r\n", 431
            ),
        ])
    func afterAnAnsweredRequest(oversized: String, status: Int) async throws {
        let first = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let (response, closed) = try await Self.live { port in try Self.exchange(port: port, first + oversized) }
        #expect(Self.statuses(response) == [200, status], "\(response.prefix(300))")
        #expect(closed, "the connection was still open 20 s after the answer")
    }
}
