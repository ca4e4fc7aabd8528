import Foundation
import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A request body that can be sent once per attempt: none, a body that iterates many times, bytes buffered
/// under a bound, or (too large to buffer) a single-pass body for the first attempt only.
///
/// A single-pass body is never refused for its size: one of known length over the bound is passed on untouched,
/// and one of unknown length is read into the buffer until it proves larger than the bound, then sent as the
/// bytes read so far followed by the rest of the same stream. One buffered whole that is not whole is refused:
/// its reading cut short by cancellation (`CancellationError`), or its stream ending before its declared length
/// (``ResilienceClientTransport/requestBodyEndedEarly(read:declared:url:)``).
enum ReplayableBody: Sendable {
    case none
    case reusable(HTTPBody)
    case buffered(ArraySlice<UInt8>)
    case once(HTTPBody)

    /// Reads the single-pass `body`, buffering it whole when it holds at most `limit` bytes; `url` names the
    /// request in the error of a body that ends before its declared length.
    static func read(_ body: HTTPBody, limit: Int, url: URL?) async throws -> ReplayableBody {
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

/// The request body of one call, shared by its attempts and read inside them.
///
/// A body with nothing to read (none, one that iterates several times, a single-pass one declared larger than
/// the bound) is ready before any attempt. A single-pass body to buffer is read by the first attempt, within the
/// attempt's deadline (raced through Core's `withDeadline` when the context has one), so the pipeline's deadline
/// stages bound a stalled upload and its failure passes the stages and their telemetry like any attempt's; later
/// attempts replay the bytes read. A single-pass body goes to one attempt only: an attempt started while another
/// reads or sends it (a hedge) waits for that one, and once that one has failed (or its reading did), every later
/// attempt ends at once with that failure, made final, without sending.
final class CallBody: Sendable {
    private enum Phase {
        /// Sent as is on an attempt (a `.once` body on the first only).
        case ready(ReplayableBody)
        /// A single-pass body the first attempt reads.
        case unread(HTTPBody)
        /// An attempt reads the body, or sends the single-pass one.
        case busy
        /// The attempt that read or sent the single-pass body failed with this.
        case spent(any Error)
    }

    private struct State {
        var phase: Phase
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        /// Waiters cancelled before they suspended.
        var cancelled: Set<UInt64> = []
    }

    /// What an attempt does with the body.
    private enum Step {
        case send(ReplayableBody)
        case read(HTTPBody)
        case fail(any Error)
        case wait
    }

    private let state: LockedState<State>
    private let limit: Int
    private let url: URL?
    /// True when the body is known before any attempt to be sendable only once (declared larger than the bound).
    let isSinglePassBeforeReading: Bool

    /// The body of a call: buffered up to `limit` bytes when single-pass; `url` names the request in errors.
    init(_ body: HTTPBody?, limit: Int, url: URL?) {
        let phase: Phase
        if let body {
            if body.iterationBehavior == .multiple {
                phase = .ready(.reusable(body))
            } else if case .known(let length) = body.length, length > Int64(limit) {
                phase = .ready(.once(body))
            } else {
                phase = .unread(body)
            }
        } else {
            phase = .ready(.none)
        }
        if case .ready(.once) = phase { isSinglePassBeforeReading = true } else { isSinglePassBeforeReading = false }
        state = LockedState(initialState: State(phase: phase))
        self.limit = limit
        self.url = url
    }

    /// The body an attempt with `context` sends, reading it first when no attempt has. Throws what reading it
    /// threw (`DeadlineExceededError` when the context's deadline passed first), or, once the attempt that had a
    /// single-pass body failed, that failure made final.
    func take(_ context: ResilienceContext) async throws -> ReplayableBody {
        while true {
            let step = state.withLock { state -> Step in
                switch state.phase {
                case .ready(let replay):
                    if replay.isSinglePass { state.phase = .busy }
                    return .send(replay)
                case .unread(let body):
                    state.phase = .busy
                    return .read(body)
                case .busy:
                    return .wait
                case .spent(let failure):
                    return .fail(failure)
                }
            }
            switch step {
            case .send(let replay):
                return replay
            case .read(let body):
                return try await read(body, context)
            case .fail(let failure):
                throw ResilienceMiddleware.final(
                    failure, classification: ResilienceMiddleware.classification(ofSpent: failure, context))
            case .wait:
                await waitWhileBusy()
                try Task.checkCancellation()
            }
        }
    }

    /// Records the failure of the attempt that sent the single-pass body: every later attempt ends with it.
    func spend(_ failure: any Error) { settle(.spent(failure)) }

    /// Records that the attempt with the single-pass body got a response: an attempt a stage starts after it
    /// anyway ends at once with a final client error, without sending.
    func sent() {
        settle(
            .spent(
                TransportError(
                    FailureClassification(
                        category: .clientError, code: .invalidFormat, isTransient: false,
                        message: "the request body can be sent only once and an earlier attempt sent it",
                        requestWasNotSent: true),
                    url: url)))
    }

    /// Reads `body` within the context's deadline.
    private func read(_ body: HTTPBody, _ context: ResilienceContext) async throws -> ReplayableBody {
        let (limit, url) = (limit, url)
        do {
            let replay: ReplayableBody
            if let deadline = context.deadline {
                replay = try await withDeadline(until: deadline, clock: context.clock) {
                    try await ReplayableBody.read(body, limit: limit, url: url)
                }
            } else {
                replay = try await ReplayableBody.read(body, limit: limit, url: url)
            }
            // A body over the bound is the reading attempt's alone.
            if !replay.isSinglePass { settle(.ready(replay)) }
            return replay
        } catch let timeUp as DeadlineExceededError where timeUp.operationError == nil {
            // The deadline had passed before the reading started: the body is untouched.
            settle(.unread(body))
            throw timeUp
        } catch {
            settle(.spent(error))
            throw error
        }
    }

    /// Moves to `phase` and wakes every attempt waiting for the body.
    private func settle(_ phase: Phase) {
        let waiters = state.withLock { state in
            state.phase = phase
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends while another attempt reads or sends the body, or until the task is cancelled.
    private func waitWhileBusy() async {
        let id = state.withLock { state in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state -> Bool in
                    guard case .busy = state.phase, state.cancelled.remove(id) == nil else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
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
