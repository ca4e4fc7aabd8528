import ResilienceKit
import ResilienceTesting
import Synchronization

/// A server-side quota in front of the simulated server: each client (told apart by `X-Client-ID`) may send
/// ``Quota/requests`` requests in each fixed window of ``Quota/window`` (windows aligned to the run's start).
/// A `200` that leaves the client's quota spent says so with `RateLimit: "default";r=0;t=T` (T = whole seconds
/// until the window resets, rounded up) and `RateLimit-Policy: "default";q=Q;w=W`, as the IETF RateLimit fields
/// do; a request beyond the quota gets `429` with `Retry-After: T` without reaching the server. Without a quota
/// it passes every request through. It runs synchronously in ``AttemptTally``, the one layer between a
/// client's pipeline and the server: ``admit(_:)`` before the request goes on, ``advertise(on:count:windowEnd:)``
/// on the server's answer.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
struct QuotaServer: Sendable {
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

    /// What the quota says about a request on its way to the server.
    enum Admission {
        /// No quota: the request goes on.
        case unlimited
        /// Within the quota: the request goes on; how many the client has sent in the window (this one
        /// included) and when the window ends, for ``advertise(on:count:windowEnd:)``.
        case counted(count: Int, windowEnd: Duration)
        /// Beyond the quota: the `429` the client gets instead of reaching the server.
        case refused(HTTPResponse)
    }

    let quota: Quota?
    let simulation: Simulation
    let windows = Windows()

    /// Counts `request` against its client's quota, now.
    func admit(_ request: HTTPRequest) -> Admission {
        guard let quota else { return .unlimited }
        let now = simulation.clock.now.offset
        let window = now.components.seconds / Int64(quota.window)
        let windowEnd = Duration.seconds((window + 1) * Int64(quota.window))
        let count = windows.count(client: request.headers["X-Client-ID"] ?? "", window: window)
        guard count <= quota.requests else {
            let retryAfter = Self.wholeSeconds(windowEnd - now)
            return .refused(HTTPResponse(status: 429, headers: ["Retry-After": "\(retryAfter)"]))
        }
        return .counted(count: count, windowEnd: windowEnd)
    }

    /// Adds the `RateLimit` fields to the server's `response` (as it leaves the server, now) when it is a success
    /// that leaves the client's quota spent: `count` requests in the window that ends at `windowEnd`.
    func advertise(on response: inout HTTPResponse, count: Int, windowEnd: Duration) {
        guard let quota else { return }
        let remaining = quota.requests - count
        let reset = Self.wholeSeconds(windowEnd - simulation.clock.now.offset)
        if response.isSuccess && remaining == 0 && reset > 0 {
            response.headers.add(name: "RateLimit", value: "\"default\";r=0;t=\(reset)")
            response.headers.add(name: "RateLimit-Policy", value: "\"default\";q=\(quota.requests);w=\(quota.window)")
        }
    }

    /// `duration` in whole seconds, rounded up (0 for a duration ≤ 0).
    static func wholeSeconds(_ duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        return attoseconds > 0 ? seconds + 1 : seconds
    }
}
