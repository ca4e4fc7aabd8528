import ResilienceKit
import ResilienceTesting

/// A transport that holds every request at `gate` until the test opens it, then sends it through `base`, and
/// counts the requests that came to it by URL path.
final class GatedTransport: HTTPTransport {
    let base: any HTTPTransport
    let gate: CallGate
    private let arrivals = LockedState(initialState: [String: Int]())

    init(base: any HTTPTransport, gate: CallGate) {
        self.base = base
        self.gate = gate
    }

    /// How many requests for `path` came to the transport (waiting at the gate, sent or cancelled).
    func arrivals(for path: String) -> Int { arrivals.withLock { $0[path] ?? 0 } }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        arrivals.withLock { $0[request.url.path, default: 0] += 1 }
        try await gate.pass()
        return try await base.send(request, context: context)
    }
}
