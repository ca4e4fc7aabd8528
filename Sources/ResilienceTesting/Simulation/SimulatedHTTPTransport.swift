/// An `HTTPTransport` that sends requests to a ``SimulatedServer`` over a simulated network, on the
/// simulation's virtual clock.
///
/// It keeps the transport contract: every response comes back whatever its status (wrap it in
/// `ResilientTransport` or validate the status yourself), a refused connection throws
/// ``SimulatedTransportError/connectionRefused``, the context's deadline ends the wait with
/// ``SimulatedTransportError/timedOut``, and cancelling the calling task ends it with `CancellationError`
/// (the server still finishes the work, as a real one would). Contexts must carry the simulation's clock
/// (``Simulation/resilienceClock``): the transport reads their deadlines on it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct SimulatedHTTPTransport: HTTPTransport {
    /// The server every request goes to.
    public let server: SimulatedServer

    /// Creates a transport to `server`.
    ///
    /// - Parameter server: The server every request goes to.
    public init(server: SimulatedServer) { self.server = server }

    /// Sends `request` to the server and waits (in virtual time) for its answer.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let deadline = context.deadline?.offset
        let inbound = server.networkDelay()
        guard inbound.attosecondCount > 0 else {
            let reply = server.accept(request)
            let outbound = server.networkDelay()
            switch reply {
            case .response(let response, let ready):
                try await wait(until: ready.attosecondCount + outbound.attosecondCount, deadline: deadline)
                return response
            case .refused(let ready):
                try await wait(until: ready.attosecondCount + outbound.attosecondCount, deadline: deadline)
                throw SimulatedTransportError.connectionRefused
            }
        }
        let arrival = server.clock.now.advanced(by: inbound)
        if let deadline, deadline.attosecondCount < arrival.offset.attosecondCount {
            try await server.clock.suspend(untilNanoseconds: VirtualClock.nanoseconds(.init(offset: deadline)))
            throw SimulatedTransportError.timedOut
        }
        // One sleep for the whole exchange: when the request arrives, the clock runs the server's decision
        // (`Exchange.relay`) on the driving thread and the sleep goes on until the answer is back, as if the
        // task had woken, asked the server and slept again.
        let exchange = Exchange(server: server, request: request, deadline: deadline)
        try await server.clock.suspend(
            untilNanoseconds: VirtualClock.nanoseconds(arrival), relay: exchange)
        switch exchange.outcome {
        case .response(let response): return response
        case .refused: throw SimulatedTransportError.connectionRefused
        case .timedOut, nil: throw SimulatedTransportError.timedOut
        }
    }

    /// Sleeps until `instant` (attoseconds from the simulation's start), or until `deadline` and then throws
    /// ``SimulatedTransportError/timedOut`` when that comes first. Inlined, so that a request costs no async
    /// frame and no executor hop beyond the sleep's own.
    @inline(__always)
    private func wait(until instant: Int128, deadline: Duration?) async throws {
        let clock = server.clock
        if let deadline, deadline.attosecondCount < instant {
            try await clock.suspend(untilNanoseconds: VirtualClock.nanoseconds(.init(offset: deadline)))
            throw SimulatedTransportError.timedOut
        }
        try await clock.suspend(
            untilNanoseconds: VirtualClock.nanoseconds(.init(offset: Duration(attosecondCount: instant))))
    }
}

/// One request on its way to the server and back: decides the answer when the request arrives.
///
/// Touched only on the simulation's driving thread (by the clock's relay and then by the resumed task), one
/// after the other, never at the same time.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
private final class Exchange: VirtualClockRelay, @unchecked Sendable {
    enum Outcome {
        case response(HTTPResponse)
        case refused
        case timedOut
    }

    let server: SimulatedServer
    let request: HTTPRequest
    let deadline: Duration?
    /// How the exchange ended; set by ``relay()``.
    var outcome: Outcome?

    init(server: SimulatedServer, request: HTTPRequest, deadline: Duration?) {
        self.server = server
        self.request = request
        self.deadline = deadline
    }

    /// The server accepts the request now; the answer is back one network delay after it is ready, or the
    /// deadline comes first.
    func relay() -> Int64? {
        let reply = server.accept(request)
        let outbound = server.networkDelay()
        var back: Int128
        switch reply {
        case .response(let response, let ready):
            back = ready.attosecondCount + outbound.attosecondCount
            outcome = .response(response)
        case .refused(let ready):
            back = ready.attosecondCount + outbound.attosecondCount
            outcome = .refused
        }
        if let deadline, deadline.attosecondCount < back {
            back = deadline.attosecondCount
            outcome = .timedOut
        }
        return VirtualClock.nanoseconds(.init(offset: Duration(attosecondCount: back)))
    }

    /// The task resumes when the answer is back.
    var relaysAgain: Bool { false }
}

/// A failure of ``SimulatedHTTPTransport`` that produced no response, classified like its real counterpart.
public enum SimulatedTransportError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// The server refused the connection (an outage without a status): the request was not sent.
    case connectionRefused
    /// The context's deadline passed before the answer arrived.
    case timedOut

    /// Network-unreachable for a refused connection (not sent, so safe to retry), timeout for a deadline.
    public var classification: FailureClassification {
        switch self {
        case .connectionRefused:
            FailureClassification(
                category: .networkUnreachable, code: .connectionRefused, requestWasNotSent: true)
        case .timedOut:
            FailureClassification(category: .timeout, code: .timedOut)
        }
    }

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .connectionRefused: "connection refused (simulated)"
        case .timedOut: "timed out (simulated)"
        }
    }
}
