import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Thin, bounded wrappers over the POSIX socket calls the fault server needs.
enum SocketIO {
    #if canImport(Darwin)
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
    #else
    static let streamType = Int32(SOCK_STREAM.rawValue)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif

    /// Opens a listening socket on 127.0.0.1:`port` and returns it with the port actually bound.
    static func listen(port: UInt16) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { throw FaultServerError(operation: "socket", errorNumber: errno) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw FaultServerError(operation: "bind", errorNumber: code)
        }
        guard systemListen(descriptor, 128) == 0 else {
            let code = errno
            close(descriptor)
            throw FaultServerError(operation: "listen", errorNumber: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// Waits up to `milliseconds` for `descriptor` to become readable; true when it is (or has hung up).
    static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let result = poll(&entry, 1, milliseconds)
        return result > 0
    }

    /// Accepts one connection, or returns nil.
    static func accept(_ listener: Int32) -> Int32? {
        let client = systemAccept(listener)
        guard client >= 0 else { return nil }
        #if canImport(Darwin)
        var yes: Int32 = 1
        setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return client
    }

    /// Reads what is available (blocking until something is); nil on close or error.
    static func read(_ descriptor: Int32, maximum: Int = 64 * 1024) -> Data? {
        var buffer = [UInt8](repeating: 0, count: maximum)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, maximum, 0) }
        guard count > 0 else { return nil }
        return Data(buffer[0..<count])
    }

    /// Writes every byte; false when the peer is gone.
    @discardableResult
    static func write(_ descriptor: Int32, _ data: Data) -> Bool {
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + offset, data.count - offset, sendFlags)
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Makes the next close send a TCP RST instead of a FIN.
    static func armReset(_ descriptor: Int32) {
        var lingerOption = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &lingerOption, socklen_t(MemoryLayout<linger>.size))
    }

    /// Wakes any thread blocked on `descriptor`.
    static func shutdownBoth(_ descriptor: Int32) {
        #if canImport(Darwin)
        _ = Darwin.shutdown(descriptor, SHUT_RDWR)
        #else
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        #endif
    }

    static func closeDescriptor(_ descriptor: Int32) {
        #if canImport(Darwin)
        _ = Darwin.close(descriptor)
        #else
        _ = Glibc.close(descriptor)
        #endif
    }

    private static func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Darwin)
        Darwin.listen(descriptor, backlog)
        #else
        Glibc.listen(descriptor, backlog)
        #endif
    }

    private static func systemAccept(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        Darwin.accept(descriptor, nil, nil)
        #else
        Glibc.accept(descriptor, nil, nil)
        #endif
    }
}

extension SocketIO {
    /// False when the peer has closed its side (a zero-byte peek).
    static func peerIsOpen(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return false }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
        return true
    }
}
