import Foundation

extension FaultServer {
    /// Serves one connection: reads requests (keep-alive) and answers each with its route's next fault.
    func serve(_ descriptor: Int32) {
        var reader = RequestReader(descriptor: descriptor, maximumSize: configuration.maximumRequestSize)
        var keepOpen = true
        while keepOpen {
            switch reader.next(isStopped: { isStopped }) {
            case .closed, .malformed:
                keepOpen = false
            case .tooLarge:
                writeResponse(descriptor, status: 413, headers: ["Connection": "close"], body: Data())
                keepOpen = false
            case .request(let request):
                guard let admitted = admit(request) else {
                    keepOpen = false
                    break
                }
                keepOpen = perform(admitted.fault, for: request, on: descriptor)
                if request.headers["Connection"]?.lowercased() == "close" { keepOpen = false }
                if admitted.isLast {
                    stop()
                    keepOpen = false
                }
            }
        }
        let owned = state.withLock { $0.connections.remove(descriptor) != nil }
        if owned { SocketIO.closeDescriptor(descriptor) }
    }

    /// Records `request` and picks its fault, and whether it is the last request before the server stops (its
    /// limit reached: the caller stops the server once it is answered); nil when the server takes no more.
    private func admit(_ request: RecordedRequest) -> (fault: Fault.Kind, isLast: Bool)? {
        state.withLock { state -> (fault: Fault.Kind, isLast: Bool)? in
            guard !state.isStopped, !state.isFull else { return nil }
            state.requestCount += 1
            state.requestsSinceStart += 1
            state.requestCountsByPath[request.path, default: 0] += 1
            var recorded = request
            recorded.sequenceNumber = state.requestCount
            state.requests.append(recorded)
            let scripted = state.routes[request.path]?.take()
            let fault = scripted.map { state.resolve($0) }
            var isLast = false
            if state.requestsSinceStart >= configuration.maximumRequests {
                if configuration.startsOverAtBounds {
                    state.startOver(seed: configuration.seed)
                } else {
                    state.isFull = true
                    isLast = true
                }
            }
            return (fault ?? .respond(status: configuration.unscriptedStatus, headers: [:], body: Data()), isLast)
        }
    }

    /// Performs `fault`; returns whether the connection may serve another request.
    private func perform(_ fault: Fault.Kind, for request: RecordedRequest, on descriptor: Int32) -> Bool {
        switch fault {
        case .respond(let status, let headers, let body):
            return writeResponse(descriptor, status: status, headers: headers, body: body, method: request.method)
        case .delayed(let delay, let next):
            guard pause(delay, watching: descriptor) else { return false }
            return perform(next, for: request, on: descriptor)
        case .randomlyDelayed, .chaos:
            let resolved = state.withLock { $0.resolve(fault) }
            return perform(resolved, for: request, on: descriptor)
        case .hang:
            while pause(.seconds(1), watching: descriptor) {}
            return false
        case .slowClose(let delay, let next):
            _ = perform(next, for: request, on: descriptor)
            _ = pause(delay, watching: descriptor)
            return false
        case .slowDrip(let status, let body, let chunkSize, let interval):
            guard writeHead(descriptor, status: status, headers: [:], contentLength: body.count) else { return false }
            // A response to HEAD has no body (RFC 9110 §9.3.2): its bytes would be read as the next response.
            if request.isHead { return true }
            var offset = 0
            while offset < body.count {
                let end = min(offset + chunkSize, body.count)
                guard SocketIO.write(descriptor, body.subdata(in: offset..<end)) else { return false }
                offset = end
                if offset < body.count { guard pause(interval, watching: descriptor) else { return false } }
            }
            return true
        case .truncated(let status, let body, let declaredLength):
            if writeHead(descriptor, status: status, headers: [:], contentLength: declaredLength) {
                SocketIO.write(descriptor, body)
            }
            return false
        case .reset:
            SocketIO.armReset(descriptor)
            return false
        case .emptyReply:
            return false
        case .garbage(let bytes):
            SocketIO.write(descriptor, bytes)
            return false
        case .redirect(let status, let location):
            return writeResponse(descriptor, status: status, headers: ["Location": location], body: Data())
        case .gzipBomb(let size):
            let bytes = state.withLock { state in
                if let cached = state.gzipCache[size] { return cached }
                let made = GzipBomb.make(decompressedSize: size)
                state.gzipCache[size] = made
                return made
            }
            return writeResponse(
                descriptor, status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                body: bytes, method: request.method)
        case .hugeBody(let size):
            guard
                writeHead(
                    descriptor, status: 200, headers: ["Content-Type": "application/octet-stream"],
                    contentLength: size)
            else { return false }
            if request.isHead { return true }
            let chunk = Data(repeating: 0x61, count: 64 * 1024)
            var sent = 0
            while sent < size {
                let count = min(chunk.count, size - sent)
                guard !isStopped, SocketIO.write(descriptor, count == chunk.count ? chunk : chunk.prefix(count))
                else { return false }
                sent += count
            }
            return true
        case .chunkedBody(let size, let gzip):
            return streamChunked(size: size, gzip: gzip, headOnly: request.isHead, on: descriptor)
        case .mutationSink(let status, let body, let afterFirstApply):
            return sink(request, status: status, body: body, afterFirstApply: afterFirstApply, on: descriptor)
        case .requireHeader(let name, let values, let then, let otherwise):
            let matches = request.headers[name].map { values.contains($0) } ?? false
            return perform(matches ? then : otherwise, for: request, on: descriptor)
        }
    }

    private func sink(
        _ request: RecordedRequest, status: Int, body: Data, afterFirstApply: Fault.Kind?, on descriptor: Int32
    ) -> Bool {
        let mutating: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]
        guard mutating.contains(request.method.uppercased()) else {
            let count = state.withLock { $0.appliedEffects.count + $0.unkeyedEffects }
            return writeResponse(
                descriptor, status: 200, headers: [:], body: Data(#"{"applied":\#(count)}"#.utf8),
                method: request.method)
        }
        enum Outcome {
            case replay(FaultServerState.StoredReply)
            case applied(firstTime: Bool)
        }
        let key = request.headers["Idempotency-Key"]
        let outcome = state.withLock { state -> Outcome in
            guard let key else {
                state.unkeyedEffects += 1
                return .applied(firstTime: false)
            }
            if let stored = state.storedReplies[key] { return .replay(stored) }
            state.appliedEffects[key, default: 0] += 1
            state.storedReplies[key] = FaultServerState.StoredReply(status: status, body: body)
            return .applied(firstTime: true)
        }
        switch outcome {
        case .replay(let stored):
            return writeResponse(
                descriptor, status: stored.status, headers: ["Idempotent-Replayed": "true"], body: stored.body)
        case .applied(let firstTime):
            if firstTime, let afterFirstApply {
                return perform(afterFirstApply, for: request, on: descriptor)
            }
            return writeResponse(descriptor, status: status, headers: ["Content-Type": "application/json"], body: body)
        }
    }

    /// Streams a chunked body of `size` bytes (or a gzip bomb inflating to `size`) without buffering it; the
    /// head alone when `headOnly` (a response to HEAD).
    private func streamChunked(size: Int, gzip: Bool, headOnly: Bool, on descriptor: Int32) -> Bool {
        var head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n"
        if gzip { head += "Content-Encoding: gzip\r\n" }
        guard SocketIO.write(descriptor, Data((head + "\r\n").utf8)) else { return false }
        if headOnly { return true }
        let payload: Data
        if gzip {
            payload = state.withLock { state in
                if let cached = state.gzipCache[size] { return cached }
                let made = GzipBomb.make(decompressedSize: size)
                state.gzipCache[size] = made
                return made
            }
        } else {
            payload = Data(repeating: 0x61, count: min(size, 64 * 1024))
        }
        let total = gzip ? payload.count : size
        let chunkSize = 64 * 1024
        var sent = 0
        while sent < total {
            let count = min(chunkSize, total - sent)
            let bytes = gzip ? payload.subdata(in: sent..<(sent + count)) : payload.prefix(count)
            var chunk = Data(String(count, radix: 16).utf8)
            chunk.append(contentsOf: [13, 10])
            chunk.append(bytes)
            chunk.append(contentsOf: [13, 10])
            guard !isStopped, SocketIO.write(descriptor, chunk) else { return false }
            sent += count
        }
        return SocketIO.write(descriptor, Data("0\r\n\r\n".utf8))
    }

    /// Sleeps up to `duration` of real time; false when the client left or the server stopped meanwhile.
    private func pause(_ duration: Duration, watching descriptor: Int32) -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: duration)
        while !isStopped {
            let left = clock.now.duration(to: end)
            if left <= .zero { return true }
            let milliseconds = min(
                100, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            if SocketIO.waitReadable(descriptor, milliseconds: Int32(milliseconds)) {
                guard SocketIO.peerIsOpen(descriptor) else { return false }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        return false
    }

    @discardableResult
    private func writeResponse(
        _ descriptor: Int32, status: Int, headers: HTTPHeaders, body: Data, method: String = "GET"
    ) -> Bool {
        guard writeHead(descriptor, status: status, headers: headers, contentLength: body.count) else { return false }
        if method.uppercased() == "HEAD" || body.isEmpty { return true }
        return SocketIO.write(descriptor, body)
    }

    private func writeHead(_ descriptor: Int32, status: Int, headers: HTTPHeaders, contentLength: Int) -> Bool {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for field in headers where field.name.lowercased() != "content-length" {
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "Content-Length: \(contentLength)\r\n\r\n"
        return SocketIO.write(descriptor, Data(head.utf8))
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}

extension RecordedRequest {
    /// Whether the request is a HEAD, whose response has a head and no body.
    fileprivate var isHead: Bool { method.uppercased() == "HEAD" }
}
