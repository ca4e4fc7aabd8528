import Foundation
import ResilienceTransport

/// One event of a `text/event-stream` body (the WHATWG HTML "server-sent events" format).
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type (`event:` field), `"message"` when the event names none.
    public var type: String
    /// The data: the event's `data:` lines joined with line feeds.
    public var data: String
    /// The last event id seen on the stream so far (`id:` field), if any.
    public var lastEventID: String?
    /// The reconnection time the server last asked for on the stream so far (`retry:` field, in milliseconds; a
    /// value too large for `Int64` is `Int64.max` milliseconds), if any. Like ``lastEventID`` it holds for the events
    /// after it, including a `retry:` sent in a block without data, which dispatches no event of its own.
    public var retry: Duration?

    /// Creates an event.
    /// - Parameters:
    ///   - type: The event type.
    ///   - data: The event's data.
    ///   - lastEventID: The last event id seen on the stream.
    ///   - retry: The reconnection time the server last asked for on the stream.
    public init(type: String = "message", data: String, lastEventID: String? = nil, retry: Duration? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
        self.retry = retry
    }
}

/// The events of a `text/event-stream` body, parsed as its chunks arrive: each event is yielded as soon as
/// its terminating blank line has been read. An error from the body is thrown once; the events end there.
///
/// ```swift
/// let response = try await transport.stream(HTTPRequest(url: url, headers: ["Accept": "text/event-stream"]), context: context)
/// for try await event in ServerSentEvents(response.body) { print(event.type, event.data) }
/// ```
///
/// Lines may end with CR, LF or CRLF (also across chunk boundaries); one leading byte order mark is ignored;
/// comments (`:`) and unknown fields are skipped; an event without data is not dispatched (its `id:` and `retry:`
/// still hold for the events after it); an unfinished event at the end of the stream is dropped.
///
/// Memory is bounded per event, not per stream: a stream runs for as long as its server sends events, but the
/// event being read (its data so far and the line not yet ended, which a hostile server may never end) may not
/// outgrow `maximumEventSize`. One that does fails with `TransportError.responseTooLarge` (`NET_011`, not
/// transient), and the events end there, having read at most one chunk past the limit. Parsing a
/// ``ResponseBodyStream``, the limit is its transport's
/// ``AsyncHTTPClientTransportConfiguration/maximumResponseSize`` and the error carries the response's URL.
public struct ServerSentEvents<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == Data {
    /// A parsed event.
    public typealias Element = ServerSentEvent

    /// The limit when `base` is not a ``ResponseBodyStream`` and none is given: 10 MB, the transports' default
    /// `maximumResponseSize`.
    public static var defaultMaximumEventSize: Int { 10 * 1024 * 1024 }

    private let base: Base
    private let maximumEventSize: Int
    private let url: URL?

    /// Parses the chunks of `base`, bounding each event by the byte cap of the transport that produced a
    /// ``ResponseBodyStream``, else by ``defaultMaximumEventSize``.
    /// - Parameter base: The body, chunk by chunk (a ``ResponseBodyStream``).
    public init(_ base: Base) {
        if let body = base as? ResponseBodyStream {
            self.init(base, maximumEventSize: body.unitLimit, url: body.url)
        } else {
            self.init(base, maximumEventSize: Self.defaultMaximumEventSize, url: nil)
        }
    }

    /// Parses the chunks of `base`, bounding each event by `maximumEventSize` bytes.
    /// - Parameters:
    ///   - base: The body, chunk by chunk.
    ///   - maximumEventSize: The most bytes one event may hold: its data so far and its unfinished line.
    public init(_ base: Base, maximumEventSize: Int) {
        self.init(base, maximumEventSize: maximumEventSize, url: (base as? ResponseBodyStream)?.url)
    }

    private init(_ base: Base, maximumEventSize: Int, url: URL?) {
        self.base = base
        self.maximumEventSize = Swift.max(0, maximumEventSize)
        self.url = url
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), maximumEventSize: maximumEventSize, url: url)
    }

    /// Reads chunks until an event is complete.
    public struct Iterator: AsyncIteratorProtocol {
        /// The body; nil once it has ended or failed (releasing a ``ResponseBodyStream`` cancels its request).
        var base: Base.AsyncIterator?
        let maximumEventSize: Int
        let url: URL?
        var pending: [UInt8] = []
        var position = 0
        /// Where the search for a line terminator resumes: no byte from `position` up to here ends a line.
        var searched = 0
        var skipsLineFeed = false
        /// Whether the stream's first bytes have yet to be checked for a byte order mark.
        var atStart = true
        var lines = LineState()
        /// The bytes searched for a line terminator so far (each byte once, however the line is chunked).
        var examinedBytes = 0

        init(base: Base.AsyncIterator, maximumEventSize: Int, url: URL?) {
            self.base = base
            self.maximumEventSize = maximumEventSize
            self.url = url
        }

        /// The next event, or nil at the end of the stream.
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                while let line = nextLine() {
                    let event = lines.consume(line)
                    guard (event?.data ?? lines.data).utf8.count <= maximumEventSize else { throw tooLarge() }
                    if let event { return event }
                }
                guard base != nil else { return nil }
                // Every complete line is consumed: what is left is the event's data and the line not yet ended.
                guard pending.count - position + lines.data.utf8.count <= maximumEventSize else { throw tooLarge() }
                let chunk: Data?
                do {
                    chunk = try await base?.next()
                } catch {
                    // An error ends the events: asking again must not read on past it.
                    finish()
                    throw error
                }
                guard let chunk else {
                    finish()
                    return nil
                }
                pending.removeFirst(position)
                searched = Swift.max(0, searched - position)
                position = 0
                pending.append(contentsOf: chunk)
            }
        }

        /// Ends the events and returns the error for an event over `maximumEventSize`.
        private mutating func tooLarge() -> TransportError {
            finish()
            lines = LineState()
            return TransportError(
                FailureClassification(
                    category: .invalidResponse, code: .responseTooLarge, isTransient: false,
                    message: "a server-sent event exceeded the \(maximumEventSize)-byte limit"),
                url: url)
        }

        /// Ends the events: releases the body and what was buffered.
        private mutating func finish() {
            base = nil
            pending = []
            position = 0
            searched = 0
        }

        /// The next complete line in the buffer (without its terminator), or nil when none is complete.
        private mutating func nextLine() -> String? {
            if atStart {
                // One leading U+FEFF is ignored (WHATWG HTML, "Parsing an event stream"), even split across chunks.
                let available = Swift.min(pending.count - position, Self.byteOrderMark.count)
                if pending[position..<(position + available)].elementsEqual(Self.byteOrderMark.prefix(available)) {
                    guard available == Self.byteOrderMark.count else { return nil }
                    position += available
                }
                atStart = false
            }
            if skipsLineFeed, position < pending.count {
                if pending[position] == UInt8(ascii: "\n") { position += 1 }
                skipsLineFeed = false
            }
            // A line still open after this chunk is searched from where the last search stopped, not from its start:
            // a long line in small chunks would otherwise cost its length squared.
            let start = Swift.max(searched, position)
            guard let end = pending[start...].firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) else {
                examinedBytes += pending.count - start
                searched = pending.count
                return nil
            }
            examinedBytes += end + 1 - start
            let line = String(decoding: pending[position..<end], as: UTF8.self)
            skipsLineFeed = pending[end] == 0x0D
            position = end + 1
            searched = position
            return line
        }

        /// U+FEFF in UTF-8.
        private static var byteOrderMark: [UInt8] { [0xEF, 0xBB, 0xBF] }
    }

    /// The fields of the event being read.
    struct LineState {
        var type = ""
        var data = ""
        var hasData = false
        var lastEventID: String?
        var retry: Duration?

        /// Applies one line; returns the event a blank line completes.
        mutating func consume(_ line: String) -> ServerSentEvent? {
            if line.isEmpty { return dispatch() }
            if line.hasPrefix(":") { return nil }
            let name: Substring
            var value: Substring
            if let colon = line.firstIndex(of: ":") {
                name = line[..<colon]
                value = line[line.index(after: colon)...]
                if value.hasPrefix(" ") { value = value.dropFirst() }
            } else {
                name = Substring(line)
                value = ""
            }
            switch name {
            case "event": type = String(value)
            case "data":
                if hasData { data += "\n" }
                data += value
                hasData = true
            case "id" where !value.contains("\0"): lastEventID = String(value)
            case "retry":
                // Only ASCII digits count; a number past Int64 asks for the longest time, not for none.
                if !value.isEmpty, value.allSatisfy(\.isASCIIDigit) {
                    retry = .milliseconds(Int64(value) ?? .max)
                }
            default: break
            }
            return nil
        }

        private mutating func dispatch() -> ServerSentEvent? {
            defer {
                type = ""
                data = ""
                hasData = false
            }
            guard hasData else { return nil }
            return ServerSentEvent(
                type: type.isEmpty ? "message" : type, data: data, lastEventID: lastEventID, retry: retry)
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
