import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A blocking socket client for FaultServer tests: sends raw bytes and reads until EOF, reset or timeout, so
/// tests see exactly what FaultServer put on the wire.
struct RawHTTPClient {
    struct Reply {
        var bytes: Data
        /// `errno` of the read that ended the exchange (0 for a clean EOF).
        var endError: Int32
        var timedOut: Bool
        var text: String { String(decoding: bytes, as: UTF8.self) }
        var head: String { text.components(separatedBy: "\r\n\r\n").first ?? "" }
        var statusCode: Int? {
            let parts = head.split(separator: " ")
            return parts.count > 1 && parts[0].hasPrefix("HTTP/") ? Int(parts[1]) : nil
        }
        func header(_ name: String) -> String? {
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                let pieces = line.split(separator: ":", maxSplits: 1)
                if pieces.count == 2, pieces[0].lowercased() == name.lowercased() {
                    return pieces[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
        var body: Data {
            guard let range = bytes.range(of: Data("\r\n\r\n".utf8)) else { return Data() }
            return bytes[range.upperBound...]
        }
    }

    let port: UInt16

    /// Sends `request` (a full HTTP request text) and reads the reply, giving up after `timeout` seconds or
    /// `maximumBytes`. The blocking socket work runs on a Dispatch thread, never on the cooperative pool.
    func exchange(_ request: String, timeout: Double = 5, maximumBytes: Int = 1 << 20) async -> Reply {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: blockingExchange(request, timeout: timeout, maximumBytes: maximumBytes))
            }
        }
    }

    private func blockingExchange(_ request: String, timeout: Double = 5, maximumBytes: Int = 1 << 20) -> Reply {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return Reply(bytes: Data(), endError: errno, timedOut: false) }
        var interval = timeval()
        interval.tv_sec = numericCast(Int(timeout))
        interval.tv_usec = numericCast(Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        let data = Array(request.utf8)
        _ = data.withUnsafeBytes { send(descriptor, $0.baseAddress, data.count, 0) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while received.count < maximumBytes {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: buffer[0..<count])
                continue
            }
            if count == 0 { return Reply(bytes: received, endError: 0, timedOut: false) }
            let code = errno
            return Reply(bytes: received, endError: code, timedOut: code == EAGAIN || code == EWOULDBLOCK)
        }
        return Reply(bytes: received, endError: 0, timedOut: false)
    }

    /// `GET path` with `Connection: close`.
    func get(
        _ path: String, headers: [String: String] = [:], timeout: Double = 5, maximumBytes: Int = 1 << 20
    ) async -> Reply {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return await exchange(text + "\r\n", timeout: timeout, maximumBytes: maximumBytes)
    }

    /// `method path` with a body and `Connection: close`.
    func request(_ method: String, _ path: String, body: String, headers: [String: String] = [:]) async -> Reply {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        return await exchange(text)
    }
}
