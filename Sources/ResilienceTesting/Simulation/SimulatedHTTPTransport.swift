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
        if inbound > .zero { try await wait(until: server.clock.now.offset + inbound, deadline: deadline) }
        let reply = server.accept(request)
        let outbound = server.networkDelay()
        switch reply {
        case .response(let response, let ready):
            try await wait(until: ready + outbound, deadline: deadline)
            return response
        case .refused(let ready):
            try await wait(until: ready + outbound, deadline: deadline)
            throw SimulatedTransportError.connectionRefused
        }
    }

    /// Sleeps until `instant`, or until `deadline` and then throws ``SimulatedTransportError/timedOut`` when
    /// that comes first (offsets from the simulation's start). Inlined, so that a request costs no async frame
    /// and no executor hop beyond the sleep's own.
    @inline(__always)
    private func wait(until instant: Duration, deadline: Duration?) async throws {
        let clock = server.clock
        if let deadline, deadline < instant {
            try await clock.suspend(untilNanoseconds: VirtualClock.nanoseconds(.init(offset: deadline)))
            throw SimulatedTransportError.timedOut
        }
        try await clock.suspend(untilNanoseconds: VirtualClock.nanoseconds(.init(offset: instant)))
    }
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
