import ResilienceKit
import ResilienceTesting
import Synchronization

/// Sits between a client's `ResilientTransport` and the simulated server and counts exactly the requests a
/// client sent after it had received an advertisement that forbade them: a `429`'s `Retry-After`, or a
/// `RateLimit` field saying the quota is spent (`r=0;t=T`), from the instant that response reached the client
/// until the time it named (the latest such time of the client winning). Each client has its own (the server's
/// quota is per client too), and each client runs its own pipeline. Requests sent before the advertisement arrived, including
/// those already on the wire when the server wrote it, are not counted: a request can only honour what its
/// client has received. (The server's own count of early arrivals includes them.) It runs synchronously in
/// ``AttemptTally``, the one layer between a client's pipeline and the server: ``sending()`` as a request
/// leaves the client, ``received(_:)`` when its answer is back.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
struct RetryAfterAudit: Sendable {
    /// Shared by every client of one run (the run is single-threaded; the lock only satisfies `Sendable`).
    final class Counter: Sendable {
        private let state = Mutex((blockedUntil: [Int: Duration](), violations: 0))

        var violations: Int { state.withLock { $0.violations } }

        func sending(client: Int, at now: Duration) {
            state.withLock { state in
                guard !state.blockedUntil.isEmpty else { return }
                if let until = state.blockedUntil[client], now < until { state.violations += 1 }
            }
        }

        func received(client: Int, retryAfter: Duration, at now: Duration) {
            state.withLock { state in
                state.blockedUntil[client] = max(state.blockedUntil[client] ?? .zero, now + retryAfter)
            }
        }
    }

    let simulation: Simulation
    let counter: Counter
    /// The client whose requests pass through (the number in their `X-Client-ID`).
    let client: Int

    /// A request leaves the client now.
    func sending() {
        counter.sending(client: client, at: simulation.clock.now.offset)
    }

    /// `response` reaches the client now: remembers the wait it advertises, if any.
    func received(_ response: HTTPResponse) {
        if response.status == 429, let header = response.headers["Retry-After"], let seconds = Int64(header) {
            counter.received(client: client, retryAfter: .seconds(seconds), at: simulation.clock.now.offset)
        }
        if let field = response.headers["RateLimit"],
            let quota = ServerQuota(rateLimitField: field, policyField: response.headers["RateLimit-Policy"]),
            quota.remaining == 0, let reset = quota.resetAfter
        {
            counter.received(client: client, retryAfter: reset, at: simulation.clock.now.offset)
        }
    }
}
