import Foundation
import Logging
import ResilienceKit
import ServiceLifecycle

/// The fake job boards `job-board-service --demo` runs instead of real upstreams: a loopback `FaultServer`
/// (ResilienceTesting) playing the six boards, each failing in its own realistic way, as a `Service` of its own
/// in the service group.
///
/// It binds a free 127.0.0.1 port when created, so that its URLs are known before the job board is built;
/// ``run()`` keeps it serving until the group shuts down gracefully and then stops it. List it before the
/// HTTP server in the group: services stop in reverse order, so the server finishes its last requests while
/// the boards still answer.
///
/// A `FaultServer` is bounded: it stops after its lifetime or its request limit, and it records every request it
/// serves until then. While ``run()`` runs, a server that stopped by itself is replaced, within a second, by a
/// fresh one on the same port (its scripts start over: the rate-limited board answers once again, the feed's
/// first answer is a full one). So the boards answer for as long as the service runs, and what a server holds
/// (its request log, its connections) stays within one server's bounds.
public final class DemoUpstreams: Service, Sendable {
    private let seed: UInt64
    private let chaos: Double
    private let lifetime: Duration
    private let maximumRequests: Int
    private let current: LockedState<Generation>
    private let logger: Logger

    /// The boards serving now, and the request counts of the servers they replaced.
    private struct Generation: Sendable {
        var boards: DemoBoards
        var retiredRequestCount = 0
        var retiredRequestCounts: [String: Int] = [:]
    }

    /// Starts the fake boards on a free 127.0.0.1 port.
    ///
    /// - Parameters:
    ///   - seed: The seed of the boards' chaos.
    ///   - chaos: The probability of a TCP reset or a 503 on the two healthy boards (0 = calm).
    ///   - lifetime: The longest one server serves: it stops then (even if never stopped), and ``run()``
    ///     replaces it.
    ///   - maximumRequests: The most requests one server serves (and records): it stops then, and ``run()``
    ///     replaces it.
    ///   - logger: Where it says where it listens, when it renews the server and when it stops.
    /// - Throws: `FaultServerError` when no loopback port can be bound.
    public init(
        seed: UInt64 = 42, chaos: Double = 0.25, lifetime: Duration = .seconds(86_400), maximumRequests: Int = 10_000,
        logger: Logger
    ) throws {
        self.seed = seed
        self.chaos = chaos
        self.lifetime = lifetime
        self.maximumRequests = maximumRequests
        current = LockedState(
            initialState: Generation(
                boards: try DemoBoards(seed: seed, chaos: chaos, lifetime: lifetime, maximumRequests: maximumRequests)))
        self.logger = logger
    }

    private var boards: DemoBoards { current.withLock { $0.boards } }

    /// The base URL of the boards played as HTTPS boards (loopback http on 127.0.0.1).
    public var boardsURL: URL { boards.upstreams.boards }
    /// The base URL of the board played as a plaintext-only host (a name that is not loopback, which the sources'
    /// policy blocks before a byte is sent).
    public var plaintextFeedsURL: URL { boards.upstreams.plaintextFeeds }
    /// What each fake board does, by source id.
    public var sourceDescriptions: [String: String] {
        Dictionary(uniqueKeysWithValues: boards.roles.map { ($0.id.rawValue, $0.simulates) })
    }
    /// How many requests reached the fake boards so far.
    public var requestCount: Int {
        current.withLock { $0.retiredRequestCount + $0.boards.server.requestCount }
    }

    /// How many requests for `path` (such as `/v1/boards/acme/jobs`) reached the fake boards so far.
    ///
    /// - Parameter path: The request path, without the query.
    /// - Returns: The number of requests for it.
    public func requestCount(for path: String) -> Int {
        current.withLock { ($0.retiredRequestCounts[path] ?? 0) + $0.boards.server.requestCount(for: path) }
    }

    /// Serves until the service group shuts down gracefully (or the task is cancelled), replacing a server that
    /// stopped by itself, then stops the server.
    ///
    /// - Throws: `FaultServerError` when a stopped server's port cannot be bound again (another process took it).
    public func run() async throws {
        logger.info("demo upstreams: fake job boards on \(boardsURL)")
        defer {
            stop()
            logger.info("demo upstreams stopped")
        }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if !Task.isCancelled { try await self.renewIfStopped() }
            }
        }
    }

    /// Replaces the server when it stopped by itself (lifetime or request limit) with a fresh one on its port.
    private func renewIfStopped() async throws {
        let stopped = boards
        guard !stopped.server.isRunning else { return }
        var attempt = 0
        while true {
            do {
                let renewed = try DemoBoards(
                    seed: seed, chaos: chaos, lifetime: lifetime, maximumRequests: maximumRequests,
                    port: stopped.server.port)
                let paths = Set(stopped.server.requests.map(\.path))
                current.withLock {
                    $0.retiredRequestCount += stopped.server.requestCount
                    for path in paths {
                        $0.retiredRequestCounts[path, default: 0] += stopped.server.requestCount(for: path)
                    }
                    $0.boards = renewed
                }
                logger.info("demo upstreams: renewed the fake job boards on \(boardsURL)")
                return
            } catch {
                // The stopped server's listener closes just after it stops: give it a moment, then give up.
                attempt += 1
                guard attempt < 20 else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Stops the server now (for use outside a service group).
    public func stop() { boards.server.stop() }
}
