import Foundation

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
/// still hold for the events after it); an unfinished event at the end of the stream is dropped. The body's byte
/// cap bounds the memory a line can take.
public struct ServerSentEvents<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == Data {
    /// A parsed event.
    public typealias Element = ServerSentEvent

    private let base: Base

    /// Parses the chunks of `base`.
    /// - Parameter base: The body, chunk by chunk (a ``ResponseBodyStream``).
    public init(_ base: Base) {
        self.base = base
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Reads chunks until an event is complete.
    public struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var pending: [UInt8] = []
        var position = 0
        /// Where the search for a line terminator resumes: no byte from `position` up to here ends a line.
        var searched = 0
        var skipsLineFeed = false
        /// Whether the stream's first bytes have yet to be checked for a byte order mark.
        var atStart = true
        var lines = LineState()
        var finished = false
        /// The bytes searched for a line terminator so far (each byte once, however the line is chunked).
        var examinedBytes = 0

        /// The next event, or nil at the end of the stream.
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                while let line = nextLine() {
                    if let event = lines.consume(line) { return event }
                }
                guard !finished else { return nil }
                let chunk: Data?
                do {
                    chunk = try await base.next()
                } catch {
                    // An error ends the events: asking again must not read on past it (beyond a byte cap, say).
                    finished = true
                    throw error
                }
                guard let chunk else {
                    finished = true
                    return nil
                }
                pending.removeFirst(position)
                searched = Swift.max(0, searched - position)
                position = 0
                pending.append(contentsOf: chunk)
            }
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
