import Foundation
import ResilienceCore

/// An ``HTTPTransport`` test double answering from a script, per URL or in sequence, and recording requests.
///
/// Answers for a URL (exact `absoluteString`) are played in order, the last one repeating; requests for URLs
/// without a script get the sequence answers in order (last repeating); with neither, a 404. An answer may
/// wait on the injected clock first, honouring cancellation. Like a real transport it honours
/// `context.deadline`: when the deadline has passed, or the answer's delay would overrun it, it waits until
/// the deadline and throws ``ResilienceError`` `attemptTimedOut`.
///
/// ```swift
/// let transport = ScriptedHTTPTransport()
/// transport.script("https://api.example.com/jobs", [.status(503), .json(#"[{"id":1}]"#)])
/// ```
public final class ScriptedHTTPTransport: HTTPTransport, Sendable {
    /// One scripted answer.
    public struct Answer: Sendable {
        /// The response, or the error to throw.
        public var result: Result<HTTPResponse, any Error>
        /// How long to wait on the clock first.
        public var delay: Duration?

        /// Creates an answer.
        ///
        /// - Parameters:
        ///   - result: The response, or the error to throw.
        ///   - delay: How long to wait on the clock first.
        public init(result: Result<HTTPResponse, any Error>, delay: Duration? = nil) {
            self.result = result
            self.delay = delay
        }

        /// A response with `status`, `headers` and a UTF-8 `body`.
        public static func status(
            _ status: Int, headers: HTTPHeaders = [:], body: String = "", after delay: Duration? = nil
        ) -> Answer {
            Answer(
                result: .success(HTTPResponse(status: status, headers: headers, body: Data(body.utf8))), delay: delay)
        }

        /// A 200 response with a JSON body.
        public static func json(_ body: String, after delay: Duration? = nil) -> Answer {
            status(200, headers: ["Content-Type": "application/json"], body: body, after: delay)
        }

        /// A 200 response with a raw body.
        public static func body(_ body: Data, status: Int = 200, after delay: Duration? = nil) -> Answer {
            Answer(result: .success(HTTPResponse(status: status, body: body)), delay: delay)
        }

        /// Throws `error`.
        public static func failure(_ error: any Error, after delay: Duration? = nil) -> Answer {
            Answer(result: .failure(error), delay: delay)
        }
    }

    private struct State {
        var byURL: [String: (answers: [Answer], next: Int)] = [:]
        var sequence: [Answer] = []
        var nextInSequence = 0
        var requests: [HTTPRequest] = []
    }

    private let clock: ResilienceClock
    private let state = LockedBox(State())

    /// Creates a transport with `sequence` answers for any URL, waiting on `clock`.
    ///
    /// - Parameters:
    ///   - sequence: Answers for any URL, one per request in order. Default: none.
    ///   - clock: The clock delayed answers sleep on (a `ManualClock` in tests). Default: `.continuous`.
    public init(sequence: [Answer] = [], clock: ResilienceClock = .continuous) {
        self.clock = clock
        state.mutate { $0.sequence = sequence }
    }

    /// Scripts the answers for `url`, replacing earlier ones.
    public func script(_ url: String, _ answers: [Answer]) {
        state.mutate { $0.byURL[url] = (answers, 0) }
    }

    /// The requests received, in order.
    public var requests: [HTTPRequest] { state.value.requests }

    /// Plays the next answer for `request`.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let answer = state.mutate { state -> Answer in
            state.requests.append(request)
            let url = request.url.absoluteString
            if let scripted = state.byURL[url], !scripted.answers.isEmpty {
                state.byURL[url]?.next += 1
                return scripted.answers[min(scripted.next, scripted.answers.count - 1)]
            }
            if !state.sequence.isEmpty {
                state.nextInSequence += 1
                return state.sequence[min(state.nextInSequence - 1, state.sequence.count - 1)]
            }
            return .status(404)
        }
        try Task.checkCancellation()
        let now = clock.now()
        if let remaining = context.remaining(now: now), remaining <= .zero || (answer.delay ?? .zero) > remaining {
            if remaining > .zero { try await clock.sleep(until: now.advanced(by: remaining)) }
            throw ResilienceError(.attemptTimedOut, key: context.key)
        }
        if let delay = answer.delay { try await clock.sleep(for: delay) }
        try Task.checkCancellation()
        var response = try answer.result.get()
        if response.url == nil { response.url = request.url }
        return response
    }
}
