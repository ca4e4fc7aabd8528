import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A request body that can be sent once per attempt: none, a body that iterates many times, bytes buffered
/// under a bound, or (too large to buffer) a single-pass body for the first attempt only.
enum ReplayableBody: Sendable {
    case none
    case reusable(HTTPBody)
    case buffered(ArraySlice<UInt8>)
    case once(HTTPBody)

    /// Classifies `body`, buffering a single-pass body of at most `limit` bytes.
    static func make(_ body: HTTPBody?, limit: Int) async throws -> ReplayableBody {
        guard let body else { return .none }
        if body.iterationBehavior == .multiple { return .reusable(body) }
        if case .known(let length) = body.length, length > Int64(limit) { return .once(body) }
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard bytes.count + chunk.count <= limit else { throw tooLarge(limit: limit) }
            bytes.append(contentsOf: chunk)
        }
        return .buffered(bytes[...])
    }

    private static func tooLarge(limit: Int) -> TransportError {
        TransportError(
            FailureClassification(
                category: .clientError, code: .invalidFormat, isTransient: false,
                message:
                    "a single-pass request body of unknown length exceeded the \(limit)-byte replay buffer; "
                    + "give it a known length or make it iterable more than once",
                requestWasNotSent: true))
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
