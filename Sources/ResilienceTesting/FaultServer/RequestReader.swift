import Foundation

/// Reads HTTP/1.1 requests off a connection, bounded in size.
struct RequestReader {
    enum Outcome {
        case request(RecordedRequest)
        case closed
        case tooLarge
        case malformed
    }

    let descriptor: Int32
    let maximumSize: Int
    var buffer = Data()

    init(descriptor: Int32, maximumSize: Int) {
        self.descriptor = descriptor
        self.maximumSize = maximumSize
    }

    private static let headTerminator = Data("\r\n\r\n".utf8)

    /// Reads the next request (head and Content-Length body).
    mutating func next(isStopped: () -> Bool) -> Outcome {
        var headEnd: Range<Data.Index>?
        while true {
            // A request line starts with a method token; anything else (a TLS ClientHello, garbage) is dropped.
            if let first = buffer.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) { return .malformed }
            headEnd = buffer.range(of: Self.headTerminator)
            if headEnd != nil { break }
            if buffer.count > maximumSize { return .tooLarge }
            guard fill(isStopped: isStopped) else { return .closed }
        }
        guard let headEnd else { return .malformed }
        let headData = buffer[buffer.startIndex..<headEnd.lowerBound]
        buffer.removeSubrange(buffer.startIndex..<headEnd.upperBound)
        guard let head = String(data: headData, encoding: .utf8) ?? String(data: headData, encoding: .isoLatin1)
        else { return .malformed }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count >= 2 else { return .malformed }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            headers.add(name: name, value: value)
        }
        if headers["Expect"]?.lowercased() == "100-continue" {
            SocketIO.write(descriptor, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        let body: Data
        if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
            guard let chunked = readChunkedBody(isStopped: isStopped) else { return .tooLarge }
            body = chunked
        } else {
            let length = Int(headers["Content-Length"] ?? "0") ?? -1
            guard length >= 0 else { return .malformed }
            guard length <= maximumSize else { return .tooLarge }
            while buffer.count < length {
                guard fill(isStopped: isStopped) else { return .closed }
            }
            body = Data(buffer.prefix(length))
            buffer.removeFirst(length)
        }
        let target = String(requestLine[1])
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return .request(
            RecordedRequest(
                method: String(requestLine[0]), path: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : nil,
                headers: headers, body: body))
    }

    private mutating func readChunkedBody(isStopped: () -> Bool) -> Data? {
        var body = Data()
        let lineEnd = Data("\r\n".utf8)
        while true {
            var end = buffer.range(of: lineEnd)
            while end == nil {
                guard buffer.count < 1024, fill(isStopped: isStopped) else { return nil }
                end = buffer.range(of: lineEnd)
            }
            guard let end else { return nil }
            let sizeLine = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex..<end.upperBound)
            let sizeText = sizeLine.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0,
                body.count + size <= maximumSize
            else { return nil }
            while buffer.count < size + 2 {
                guard fill(isStopped: isStopped) else { return nil }
            }
            body.append(buffer.prefix(size))
            buffer.removeFirst(size + 2)
            if size == 0 { return body }
        }
    }

    /// Appends whatever arrives next; false when the peer closed or the server stopped.
    private mutating func fill(isStopped: () -> Bool) -> Bool {
        while !isStopped() {
            guard SocketIO.waitReadable(descriptor, milliseconds: 100) else { continue }
            guard let chunk = SocketIO.read(descriptor) else { return false }
            buffer.append(chunk)
            return true
        }
        return false
    }
}
