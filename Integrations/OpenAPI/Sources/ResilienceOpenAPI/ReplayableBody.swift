import Foundation
import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A request body that can be sent once per attempt: none, a body that iterates many times, bytes buffered
/// under a bound, or (too large to buffer) a single-pass body for the first attempt only.
///
/// A single-pass body is never refused for its size: one of known length over the bound is passed on untouched,
/// and one of unknown length is read into the buffer until it proves larger than the bound, then sent as the
/// bytes read so far followed by the rest of the same stream. One buffered whole that is not whole is refused
/// before any attempt: its reading cut short by the call's cancellation (`CancellationError`), or its stream
/// ending before its declared length (``ResilienceClientTransport/requestBodyEndedEarly(read:declared:url:)``).
enum ReplayableBody: Sendable {
    case none
    case reusable(HTTPBody)
    case buffered(ArraySlice<UInt8>)
    case once(HTTPBody)

    /// Classifies `body`, buffering a single-pass body of at most `limit` bytes; `url` names the request in the
    /// error of a body that ends before its declared length.
    static func make(_ body: HTTPBody?, limit: Int, url: URL?) async throws -> ReplayableBody {
        guard let body else { return .none }
        if body.iterationBehavior == .multiple { return .reusable(body) }
        if case .known(let length) = body.length, length > Int64(limit) { return .once(body) }
        var iterator = body.makeAsyncIterator()
        var bytes: [UInt8] = []
        while let chunk = try await iterator.next() {
            bytes.append(contentsOf: chunk)
            if bytes.count > limit {
                let rest = ResumedBody(read: bytes[...], rest: BodyIterator(iterator))
                return .once(HTTPBody(rest, length: body.length, iterationBehavior: .single))
            }
        }
        try ResilienceClientTransport.checkComplete(body, read: bytes.count, url: url)
        return .buffered(bytes[...])
    }

    /// The body to send on an attempt (a single-pass body is only ever sent on the first).
    var body: HTTPBody? {
        switch self {
        case .none: nil
        case .reusable(let body), .once(let body): body
        case .buffered(let bytes): HTTPBody(bytes)
        }
    }

    /// True when the body cannot be sent again, so the call must not be retried.
    var isSinglePass: Bool {
        if case .once = self { return true }
        return false
    }
}

/// A single-pass body that was partly read: the bytes already read, then the rest of the original stream.
struct ResumedBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let read: ArraySlice<UInt8>
    let rest: BodyIterator

    func makeAsyncIterator() -> Iterator { Iterator(read: read, rest: rest) }

    struct Iterator: AsyncIteratorProtocol {
        var read: ArraySlice<UInt8>?
        let rest: BodyIterator

        mutating func next() async throws -> ArraySlice<UInt8>? {
            if let bytes = read {
                read = nil
                return bytes
            }
            return try await rest.next()
        }
    }
}

/// The iterator of a single-pass body, carried from the task that started reading it to the one that
/// finishes: its body is `.single`, so exactly one consumer ever calls ``next()``, never concurrently.
final class BodyIterator: @unchecked Sendable {
    private var iterator: HTTPBody.Iterator

    init(_ iterator: HTTPBody.Iterator) { self.iterator = iterator }

    func next() async throws -> ArraySlice<UInt8>? { try await iterator.next() }
}
