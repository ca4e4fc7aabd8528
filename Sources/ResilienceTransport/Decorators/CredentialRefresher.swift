/// Single-flight refresh with a sliding-window limit: the state machine behind ``AuthenticatingTransport``.
///
/// Every credential gets a generation number. A request rejected with generation `g` asks for a refresh;
/// if the current generation is already newer, it just uses the current credential; if a refresh is under
/// way, it joins it; otherwise it starts one. So N concurrent rejections cause exactly one refresh.
///
/// A failed refresh also moves the generation on, and remembers which generation it failed from: a request
/// rejected with that generation (one that was in flight while the refresh ran, whose 401 arrived after it
/// failed) fails with `AUTH_001` at once instead of starting another refresh. Requests that start later use
/// the new generation, so the next rejection may try one refresh again: one refresh per round, no loop.
final class CredentialRefresher: Sendable {
    struct Snapshot {
        var credential: Credential?
        var generation: Int
    }

    private struct State {
        var credential: Credential?
        var generation = 0
        var loaded = false
        var inFlight: Task<Credential, any Error>?
        var refreshTimes: [ResilienceInstant] = []
        /// The generation the last refresh started from, when that refresh failed.
        var failedFrom: Int?
        var failureReason: String?
    }

    private enum Plan {
        case use(Snapshot)
        case failed(String?)
        case join(Task<Credential, any Error>)
        case limitReached
    }

    private let provider: any CredentialProvider
    private let configuration: AuthenticationConfiguration
    private let state = LockedState(initialState: State())

    init(provider: any CredentialProvider, configuration: AuthenticationConfiguration) {
        self.provider = provider
        self.configuration = configuration
    }

    /// The credential to attach, loading it from the provider the first time.
    func current() async throws -> Snapshot {
        if let snapshot = state.withLock({
            $0.loaded ? Snapshot(credential: $0.credential, generation: $0.generation) : nil
        }) {
            return snapshot
        }
        let credential = try await provider.currentCredential()
        return state.withLock { state in
            if !state.loaded {
                state.loaded = true
                state.credential = credential
            }
            return Snapshot(credential: state.credential, generation: state.generation)
        }
    }

    /// A credential newer than `generation`: the current one if somebody already refreshed, else the result of
    /// the one shared refresh.
    func refreshed(after generation: Int, context: ResilienceContext) async throws -> Snapshot {
        let now = context.clock.now()
        let window = configuration.refreshWindow
        let limit = configuration.maximumRefreshes
        let provider = provider
        let plan = state.withLock { state -> Plan in
            if state.failedFrom == generation { return .failed(state.failureReason) }
            if state.generation > generation {
                return .use(Snapshot(credential: state.credential, generation: state.generation))
            }
            if let inFlight = state.inFlight { return .join(inFlight) }
            state.refreshTimes.removeAll { $0.duration(to: now) >= window }
            guard state.refreshTimes.count < limit else { return .limitReached }
            state.refreshTimes.append(now)
            let rejected = state.credential
            let task = Task { try await provider.refreshCredential(rejected: rejected) }
            state.inFlight = task
            return .join(task)
        }
        switch plan {
        case .use(let snapshot):
            return snapshot
        case .failed(let reason):
            throw AuthenticationFailure.sessionExpired(reason: reason)
        case .limitReached:
            throw AuthenticationFailure.refreshLimitReached(limit: limit, window: window)
        case .join(let task):
            let result = await task.result
            let (snapshot, isFirst) = state.withLock { state -> (Snapshot?, Bool) in
                let isFirst = state.inFlight == task
                if isFirst {
                    state.inFlight = nil
                    switch result {
                    case .success(let credential):
                        state.credential = credential
                        state.loaded = true
                        state.failedFrom = nil
                        state.failureReason = nil
                    case .failure(let error):
                        state.failedFrom = state.generation
                        state.failureReason = error is CancellationError ? nil : "\(error)"
                    }
                    state.generation += 1
                }
                if case .success = result {
                    return (Snapshot(credential: state.credential, generation: state.generation), isFirst)
                }
                return (nil, isFirst)
            }
            if isFirst {
                context.emit(.credentialRefreshed) { $0.detail = snapshot == nil ? "failed" : "succeeded" }
            }
            try Task.checkCancellation()
            if let snapshot { return snapshot }
            if case .failure(let error) = result {
                if error is CancellationError { throw error }
                throw AuthenticationFailure.sessionExpired(reason: "\(error)")
            }
            throw AuthenticationFailure.sessionExpired()
        }
    }
}
