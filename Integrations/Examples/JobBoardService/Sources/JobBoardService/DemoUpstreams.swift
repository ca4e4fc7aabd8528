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
/// A `FaultServer` is bounded: it records every request it serves, up to its request limit or its lifetime. The
/// demo's server starts over then, instead of stopping: on the same listener and connections, its log emptied and
/// its scripts replayed from their first answer (the rate-limited board answers once again, the feed's first answer
/// is a full one), so that the boards answer every request for as long as the service runs, and what the server
/// holds (its request log) stays within one server's bounds.
public final class DemoUpstreams: Service, Sendable {
    private let boards: DemoBoards
    private let logger: Logger

    /// Starts the fake boards on a free 127.0.0.1 port.
    ///
    /// - Parameters:
    ///   - seed: The seed of the boards' chaos.
    ///   - chaos: The probability of a TCP reset or a 503 on the two healthy boards (0 = calm).
    ///   - lifetime: The longest the server serves before it starts over.
    ///   - maximumRequests: The most requests the server serves (and records) before it starts over.
    ///   - logger: Where it says where it listens and when it stops.
    /// - Throws: `FaultServerError` when no loopback port can be bound.
    public init(
        seed: UInt64 = 42, chaos: Double = 0.25, lifetime: Duration = .seconds(86_400), maximumRequests: Int = 10_000,
        logger: Logger
    ) throws {
        boards = try DemoBoards(
            seed: seed, chaos: chaos, lifetime: lifetime, maximumRequests: maximumRequests, startsOverAtBounds: true)
        self.logger = logger
    }

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
    public var requestCount: Int { boards.server.requestCount }

    /// How many requests for `path` (such as `/v1/boards/acme/jobs`) reached the fake boards so far.
    ///
    /// - Parameter path: The request path, without the query.
    /// - Returns: The number of requests for it.
    public func requestCount(for path: String) -> Int { boards.server.requestCount(for: path) }

    /// Serves until the service group shuts down gracefully (or the task is cancelled), then stops the server.
    public func run() async throws {
        logger.info("demo upstreams: fake job boards on \(boardsURL)")
        defer {
            stop()
            logger.info("demo upstreams stopped")
        }
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3_600)) }
        }
    }

    /// Stops the server now (for use outside a service group).
    public func stop() { boards.server.stop() }
}
