import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking TCP sockets to the server under test on 127.0.0.1.
enum LoopbackSocket {
    /// A blocking socket connected to 127.0.0.1:`port`, with a receive buffer of `receiveBufferSize` bytes when
    /// given (set before connecting, so the connection's window follows it); the caller closes it.
    static func open(port: Int, receiveBufferSize: Int32? = nil) throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        if var size = receiveBufferSize {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        return descriptor
    }
}

/// A client on a blocking loopback socket that sends the start of a request and then nothing more, the way a
/// slow or hostile client holds a server's connection.
enum SilentClient {
    /// Connects to 127.0.0.1:`port`, sends a request line and one header (no blank line), and waits up to
    /// `bound` for the server to close the connection.
    ///
    /// - Returns: `true` when the server closed the connection (end of stream or reset) within `bound`.
    static func sendHalfARequestAndWaitForClose(port: Int, bound: Duration) throws -> Bool {
        let descriptor = try LoopbackSocket.open(port: port)
        defer { close(descriptor) }
        let head = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        guard head.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == head.count else {
            throw POSIXError(.EPIPE)
        }
        var timeout = timeval(tv_sec: Int(bound.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 1_024)
        while true {
            let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received == 0 { return true }  // end of stream: the server closed it
            if received < 0 { return errno == ECONNRESET }  // EAGAIN: the bound passed with the connection open
        }
    }
}
