import Foundation
import ResilienceKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Clients on blocking loopback sockets sending one request per connection (`Connection: close`) in a loop, each
/// on a thread of its own, and how every request ended: a server under load, as a shutdown meets it.
final class LoadClient: Sendable {
    /// How one request ended.
    enum Outcome: Equatable, Sendable {
        /// A whole answer (its status; the body as long as it said) and the end of the stream after it.
        case answered(Int)
        /// The connection was refused: nothing listens (any more).
        case refused
        /// The connection was reset or closed before a byte of an answer arrived.
        case notAnswered
        /// Part of an answer, then the end of the stream or a reset.
        case cutOff(String)
        /// No end within the bound.
        case hung
    }

    /// One request: its path, when it was sent and ended, and how.
    struct Request: Sendable {
        var path: String
        var sent: ContinuousClock.Instant
        var ended: ContinuousClock.Instant
        var outcome: Outcome
    }

    private let port: Int
    private let paths: [String]
    private let bound: Int
    private let state = LockedState(initialState: (stopped: false, requests: [Request](), running: 0))

    /// Creates clients of 127.0.0.1:`port` asking for `paths` in turn, each request bounded by `bound` seconds.
    init(port: Int, paths: [String], bound: Int = 30) {
        self.port = port
        self.paths = paths
        self.bound = bound
    }

    /// Starts `count` clients.
    func start(_ count: Int) {
        for index in 0..<count {
            state.withLock { $0.running += 1 }
            Thread.detachNewThread { [self] in
                var turn = index
                while !state.withLock({ $0.stopped }) {
                    let path = paths[turn % paths.count]
                    turn += 1
                    let sent = ContinuousClock.now
                    let outcome = request(path)
                    let request = Request(path: path, sent: sent, ended: .now, outcome: outcome)
                    state.withLock { $0.requests.append(request) }
                    if outcome == .refused { Thread.sleep(forTimeInterval: 0.05) }
                }
                state.withLock { $0.running -= 1 }
            }
        }
    }

    /// How many of `requests` ended each way, by path: `["/jobs answered(200)": 31, "/ refused": 2]`.
    static func summary(_ requests: [Request]) -> [String: Int] {
        Dictionary(grouping: requests) { "\($0.path) \($0.outcome)" }.mapValues(\.count)
    }

    /// Stops the clients once their requests have ended (each within its bound) and returns every request.
    func stop() async throws -> [Request] {
        state.withLock { $0.stopped = true }
        while state.withLock({ $0.running > 0 }) { try await Task.sleep(for: .milliseconds(50)) }
        return state.withLock { $0.requests }
    }

    private func request(_ path: String) -> Outcome {
        guard let descriptor = try? LoopbackSocket.open(port: port) else { return .refused }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: bound, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let text = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        guard text.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, flags) }) == text.count else {
            return .notAnswered
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .hung }
            if received.isEmpty { return .notAnswered }
            return Self.whole(received) ?? .cutOff(String(decoding: received.prefix(200), as: UTF8.self))
        }
    }

    /// The status of `bytes` when they are one whole answer (a head and a body of its `Content-Length`).
    private static func whole(_ bytes: [UInt8]) -> Outcome? {
        let separator = Array("\r\n\r\n".utf8)
        guard bytes.count >= separator.count,
            let end = (0...(bytes.count - separator.count)).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }
            )
        else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first
        guard let length, bytes.count - end - 4 == length else { return nil }
        return .answered(status)
    }
}
