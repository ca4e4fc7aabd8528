import ResilienceKit
import ResilienceTesting
import Synchronization

/// A server-side quota in front of the simulated server: each client (told apart by `X-Client-ID`) may send
/// ``Quota/requests`` requests in each fixed window of ``Quota/window`` (windows aligned to the run's start).
/// A `200` that leaves the client's quota spent says so with `RateLimit: "default";r=0;t=T` (T = whole seconds
/// until the window resets, rounded up) and `RateLimit-Policy: "default";q=Q;w=W`, as the IETF RateLimit fields
/// do; a request beyond the quota gets `429` with `Retry-After: T` without reaching the server. Without a quota
/// it passes every request through.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
struct QuotaServer: HTTPTransport {
    /// The quota every client gets.
    struct Quota: Sendable, Hashable {
        /// Requests per window.
        var requests: Int
        /// The window, in whole seconds.
        var window: Int
    }

    /// Per client: the window it last sent in and how many requests it sent there (single-threaded run; the
    /// lock only satisfies `Sendable`).
    final class Windows: Sendable {
        private let state = Mutex([String: (window: Int64, count: Int)]())

        /// Counts a request of `client` in `window` and returns how many it has sent there, this one included.
        func count(client: String, window: Int64) -> Int {
            state.withLock { state in
                var entry = state[client] ?? (window, 0)
                if entry.window != window { entry = (window, 0) }
                entry.count += 1
                state[client] = entry
                return entry.count
            }
        }
    }

    let wrapped: SimulatedHTTPTransport
    let quota: Quota?
    let simulation: Simulation
    let windows = Windows()

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        guard let quota else { return try await wrapped.send(request, context: context) }
        let now = simulation.clock.now.offset
        let window = now.components.seconds / Int64(quota.window)
        let windowEnd = Duration.seconds((window + 1) * Int64(quota.window))
        let count = windows.count(client: request.headers["X-Client-ID"] ?? "", window: window)
        guard count <= quota.requests else {
            return HTTPResponse(status: 429, headers: ["Retry-After": "\(Self.wholeSeconds(windowEnd - now))"])
        }
        var response = try await wrapped.send(request, context: context)
        let remaining = quota.requests - count
        let reset = Self.wholeSeconds(windowEnd - simulation.clock.now.offset)
        if response.isSuccess && remaining == 0 && reset > 0 {
            response.headers.add(name: "RateLimit", value: "\"default\";r=0;t=\(reset)")
            response.headers.add(name: "RateLimit-Policy", value: "\"default\";q=\(quota.requests);w=\(quota.window)")
        }
        return response
    }

    /// `duration` in whole seconds, rounded up (0 for a duration ≤ 0).
    static func wholeSeconds(_ duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        return attoseconds > 0 ? seconds + 1 : seconds
    }
}
