import Foundation

/// A real HTTP/1.1 server on 127.0.0.1 that misbehaves on purpose, for tests and demos.
///
/// It listens on an ephemeral port as soon as it is created, serves each connection on its own thread, and
/// answers each path with the next ``Fault`` of that path's script (the last one repeats). Every request is
/// recorded for assertions. It stops by itself after ``FaultServerConfiguration/lifetime`` (measured with
/// the system's monotonic clock: this is the one component that lives in real time) or
/// ``FaultServerConfiguration/maximumRequests`` (or starts over then, with
/// ``FaultServerConfiguration/startsOverAtBounds``); ``stop()`` closes the listener and every connection.
///
/// ```swift
/// let server = try FaultServer()
/// defer { server.stop() }
/// server.script("/jobs", .status(503), .status(503), .ok("[]"))
/// let url = server.url("/jobs")
/// ```
public final class FaultServer: Sendable {
    /// The bound port.
    public let port: UInt16
    /// The settings it was started with.
    public let configuration: FaultServerConfiguration

    let listener: Int32
    let state: LockedState<FaultServerState>

    /// Starts listening (well under a second); throws ``FaultServerError`` when the socket cannot be bound.
    ///
    /// - Parameter configuration: The port (0 picks a free one), lifetime, request limits, the status of
    ///   unscripted routes and the random seed. Default: `.standard`.
    public init(configuration: FaultServerConfiguration = .standard) throws {
        let (descriptor, port) = try SocketIO.listen(port: configuration.port)
        self.listener = descriptor
        self.port = port
        self.configuration = configuration
        self.state = LockedState(initialState: FaultServerState(seed: configuration.seed))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The absolute URL of `path` on this server (`path` starts with `/` and may carry a query).
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Scripts `path` (query ignored): each request gets the next fault; the last one repeats.
    public func script(_ path: String, _ faults: [Fault]) {
        state.withLock { $0.routes[path] = FaultServerState.Route(faults: faults.map(\.kind)) }
    }

    /// Scripts `path` with the given faults in order; the last one repeats.
    public func script(_ path: String, _ faults: Fault...) { script(path, faults) }

    /// Every request received so far (since the last start-over, with
    /// ``FaultServerConfiguration/startsOverAtBounds``), in arrival order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// The requests received for `path` (since the last start-over, with
    /// ``FaultServerConfiguration/startsOverAtBounds``).
    public func requests(to path: String) -> [RecordedRequest] {
        state.withLock { $0.requests.filter { $0.path == path } }
    }

    /// How many requests arrived in total.
    public var requestCount: Int { state.withLock { $0.requestCount } }

    /// How many requests arrived for `path`.
    public func requestCount(for path: String) -> Int { state.withLock { $0.requestCountsByPath[path] ?? 0 } }

    /// For mutation-sink routes: how many times each `Idempotency-Key` was applied (at most 1 each).
    public var appliedEffects: [String: Int] { state.withLock { $0.appliedEffects } }

    /// For mutation-sink routes: how many mutations without an `Idempotency-Key` were applied.
    public var unkeyedEffects: Int { state.withLock { $0.unkeyedEffects } }

    /// How many connections are open right now.
    public var openConnectionCount: Int { state.withLock { $0.connections.count } }

    /// False once stopped (by ``stop()``, its lifetime or its request limit).
    public var isRunning: Bool { state.withLock { !$0.isStopped } }

    /// Stops accepting, closes the listener and shuts down every open connection. Idempotent.
    public func stop() {
        let connections = state.withLock { state -> Set<Int32>? in
            guard !state.isStopped else { return nil }
            state.isStopped = true
            return state.connections
        }
        guard let connections else { return }
        SocketIO.shutdownBoth(listener)
        for descriptor in connections { SocketIO.shutdownBoth(descriptor) }
    }

    var isStopped: Bool { state.withLock { $0.isStopped } }

    private func acceptLoop() {
        defer { SocketIO.closeDescriptor(listener) }
        while !isStopped {
            let now = ContinuousClock.now
            let lifetimeEnded = state.withLock { state in
                guard now >= state.started.advanced(by: configuration.lifetime) else { return false }
                guard configuration.startsOverAtBounds else { return true }
                state.startOver(seed: configuration.seed)
                return false
            }
            if lifetimeEnded {
                stop()
                return
            }
            guard SocketIO.waitReadable(listener, milliseconds: 50), let client = SocketIO.accept(listener) else {
                continue
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.isStopped else { return false }
                state.connections.insert(client)
                return true
            }
            guard admitted else {
                SocketIO.closeDescriptor(client)
                return
            }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }
}
