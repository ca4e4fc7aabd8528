/// Single-flight refresh with a sliding-window limit: the state machine behind ``AuthenticatingTransport``.
///
/// Every credential gets a generation number. A request rejected with generation `g` asks for a refresh;
/// if the current generation is already newer, it just uses the current credential; if a refresh is under
/// way, it joins it; otherwise it starts one. So N concurrent rejections cause exactly one refresh.
///
/// A failed refresh also moves the generation on, and remembers which generation it failed from: a request
/// rejected with that generation (one that was in flight while the refresh ran, whose 401 arrived after it
/// failed) fails at once as the waiters did (`AUTH_001`, or the refresh's transient failure) instead of
/// starting another refresh. Requests that start later use the new generation, so the next rejection may try
/// one refresh again: one refresh per round, no loop.
///
/// The refresh runs in a task of its own; each caller's wait for it is its own. A caller cancelled meanwhile
/// leaves at once, and one whose deadline passes first fails as a timeout, while the refresh goes on for the
/// others, until ``AuthenticationConfiguration/refreshTimeout`` ends it as a failed refresh.
///
/// A credential a refresh obtained remembers when it arrived, so its lifetime as known then is
/// `expiresAt − obtainedAt`; the proactive window before its expiry is
/// ``AuthenticationConfiguration/proactiveRefreshSkew`` but never more than half that lifetime
/// (`Snapshot.isDueForRefresh(skew:now:)`). A credential that lives no longer than the skew would otherwise be
/// "about to expire" from the moment it arrives and be refreshed before every request, until the refresh limit
/// failed them all. The provider's first credential (``CredentialProvider/currentCredential()``) may have been
/// stored long before, so its age is unknown: it gets the whole skew.
///
/// The limit stops refresh storms, not renewals. A credential has *served* once the server answered a request sent
/// with it with a status that is not a rejection, while it had not expired yet (read when the answer arrived).
/// The one refresh before sending that replaces a credential that served (it came due or expired after doing its
/// work) is a renewal: it is never refused and does not count. Every other refresh counts, at most
/// ``AuthenticationConfiguration/maximumRefreshes`` per ``AuthenticationConfiguration/refreshWindow``: one after
/// a rejection (a server that refuses every fresh credential), one replacing a credential that never served (it
/// arrived expired, or expired before any answer accepted it: a provider handing out dead credentials), and a
/// second attempt for the same credential after its renewal failed (a token endpoint that is down). Each
/// credential earns at most one renewal, which comes no sooner than its proactive window, so renewals follow the
/// credential's own lifetime (a 5 s token is renewed about every 2.5 s, whatever the request rate), and
/// credentials that do no work are limited as before.
///
/// A proactive refresh the limit refuses while the credential is still valid is put off (the request is sent
/// with that credential, and a later request asks again), and only a credential that has expired, or that the
/// server refused, fails with `AUTH_004`.
final class CredentialRefresher: Sendable {
    struct Snapshot {
        var credential: Credential?
        var generation: Int
        /// When a refresh handed this credential over, on the context's clock; `nil` for the provider's first
        /// credential, whose age is unknown.
        var obtainedAt: ResilienceInstant?
        /// Which credential this is: moves on only when a refresh hands over a new one (a failed refresh moves
        /// the generation on, not this).
        var credentialNumber: Int
        /// Whether this credential had already served a request when the snapshot was taken.
        var hasServed: Bool

        /// Whether to refresh before sending at `now`: the credential expires within `skew`, or within half its
        /// lifetime as known when it was obtained, whichever is shorter. A credential with no expiry never is;
        /// one that had already expired when it arrived always is.
        func isDueForRefresh(skew: Duration, now: ResilienceInstant) -> Bool {
            guard let credential, let expiresAt = credential.expiresAt else { return false }
            var window = skew
            if let obtainedAt {
                let lifetime = obtainedAt.duration(to: expiresAt)
                window = min(skew, max(.zero, lifetime / 2))
            }
            return credential.expires(within: window, of: now)
        }
    }

    private struct State {
        var credential: Credential?
        var generation = 0
        var obtainedAt: ResilienceInstant?
        var credentialNumber = 0
        /// The credential (by number) that served a request, when the current one has.
        var servedCredential: Int?
        /// The credential (by number) whose one renewal has been started.
        var renewedCredential: Int?
        var loaded = false
        var inFlight: Task<Snapshot, any Error>?
        /// When the refreshes that count against the limit started (renewals are not among them).
        var refreshTimes: [ResilienceInstant] = []
        /// The generation the last refresh started from, when that refresh failed.
        var failedFrom: Int?
        /// What the requests waiting on that failed refresh got.
        var failure: (any Error)?

        var snapshot: Snapshot {
            Snapshot(
                credential: credential, generation: generation, obtainedAt: obtainedAt,
                credentialNumber: credentialNumber, hasServed: servedCredential == credentialNumber)
        }

        /// Whether a refresh before sending, now, renews a credential that served: the one refresh it earned.
        var isRenewal: Bool { servedCredential == credentialNumber && renewedCredential != credentialNumber }
    }

    private enum Plan {
        case use(Snapshot)
        case failed(any Error)
        case join(Task<Snapshot, any Error>)
        case limitReached
    }

    private let provider: any CredentialProvider
    private let configuration: AuthenticationConfiguration
    private let state = LockedState(initialState: State())
    /// The callers waiting for a refresh round, keyed by the generation it started from: each caller's wait is
    /// its own, so one that leaves (cancelled, or past its deadline) never ends the others' nor the refresh.
    private let waits = SingleFlight<Int>()
    /// The provider's refresh of each round, keyed by the generation it started from: the round waits for it
    /// through a wait of its own, which the refresh timeout ends at once even when the provider ignores the
    /// cancellation.
    private let providerCalls = SingleFlight<Int>()

    init(provider: any CredentialProvider, configuration: AuthenticationConfiguration) {
        self.provider = provider
        self.configuration = configuration
    }

    /// The credential to attach, loading it from the provider the first time.
    func current() async throws -> Snapshot {
        if let snapshot = state.withLock({
            $0.loaded ? $0.snapshot : nil
        }) {
            return snapshot
        }
        let credential = try await provider.currentCredential()
        return state.withLock { state in
            if !state.loaded {
                state.loaded = true
                state.credential = credential
            }
            return state.snapshot
        }
    }

    /// A credential newer than `generation`: the current one if somebody already refreshed, else the result of
    /// the one shared refresh, waited for within the caller's deadline and until the caller is cancelled.
    ///
    /// `rejectionStatus` is the status the server refused the request with, or `nil` for a refresh before
    /// sending. A refresh before sending that renews a credential that served is not limited; any other counts.
    /// When the limit refuses the refresh before sending and the current credential has not expired yet, that
    /// credential is returned (the refresh waits for a later request); otherwise the refusal is `AUTH_004`,
    /// which says whether the request was stopped before sending or after its rejection.
    func refreshed(
        after generation: Int, rejectionStatus: Int? = nil, context: ResilienceContext
    ) async throws -> Snapshot {
        let now = context.clock.now()
        let window = configuration.refreshWindow
        let limit = configuration.maximumRefreshes
        let plan = state.withLock { state -> Plan in
            if state.failedFrom == generation, let failure = state.failure { return .failed(failure) }
            if state.generation > generation {
                return .use(state.snapshot)
            }
            if let inFlight = state.inFlight { return .join(inFlight) }
            if rejectionStatus == nil && state.isRenewal {
                // The credential did its work and came due: renewed, whatever the limit says.
                state.renewedCredential = state.credentialNumber
            } else {
                state.refreshTimes.removeAll { $0.duration(to: now) >= window }
                guard state.refreshTimes.count < limit else {
                    // Before sending, the limit only defers the refresh of a credential that has not expired
                    // yet: it protects the token endpoint, and the request is sent with that credential.
                    if rejectionStatus == nil, let credential = state.credential,
                        !credential.expires(within: .zero, of: now)
                    {
                        return .use(state.snapshot)
                    }
                    return .limitReached
                }
                state.refreshTimes.append(now)
            }
            let rejected = state.credential
            let task = Task { try await self.refresh(replacing: rejected, from: generation, context: context) }
            state.inFlight = task
            return .join(task)
        }
        switch plan {
        case .use(let snapshot):
            return snapshot
        case .failed(let failure):
            throw failure
        case .limitReached:
            throw AuthenticationFailure.refreshLimitReached(
                limit: limit, window: window, afterRejectionStatus: rejectionStatus)
        case .join(let task):
            return try await wait(for: task, from: generation, context: context)
        }
    }

    /// One refresh round, in a task of its own that no caller's cancellation reaches (a refresh cut off midway
    /// may have spent a one-time refresh token; only the refresh timeout cuts it off): asks the provider,
    /// records the outcome and moves the generation on, whether or not anybody still waits for it.
    private func refresh(
        replacing rejected: Credential?, from generation: Int, context: ResilienceContext
    ) async throws -> Snapshot {
        let result: Result<Credential, any Error>
        do { result = .success(try await obtain(replacing: rejected, from: generation, clock: context.clock)) } catch {
            result = .failure(Self.failure(of: error, context: context))
        }
        let obtainedAt = context.clock.now()
        let snapshot = state.withLock { state -> Snapshot in
            state.inFlight = nil
            switch result {
            case .success(let credential):
                state.credential = credential
                state.obtainedAt = obtainedAt
                state.credentialNumber += 1
                state.loaded = true
                state.failedFrom = nil
                state.failure = nil
            case .failure(let failure):
                state.failedFrom = generation
                state.failure = failure
            }
            state.generation += 1
            return state.snapshot
        }
        if case .failure(let failure) = result {
            context.emit(.credentialRefreshed) { $0.detail = "failed" }
            throw failure
        }
        context.emit(.credentialRefreshed) { $0.detail = "succeeded" }
        return snapshot
    }

    /// The provider's new credential for the round started from `generation`, within
    /// ``AuthenticationConfiguration/refreshTimeout``: a refresh still running then is cancelled and the round fails
    /// as ``TransportError/timedOut(after:url:)`` at once, without waiting for a provider that ignores the
    /// cancellation (what it returns later is dropped).
    private func obtain(
        replacing rejected: Credential?, from generation: Int, clock: ResilienceClock
    ) async throws -> Credential {
        let provider = provider
        guard let timeout = configuration.refreshTimeout else {
            return try await provider.refreshCredential(rejected: rejected)
        }
        let calls = providerCalls
        do {
            return try await withDeadline(after: timeout, clock: clock) {
                try await calls.run(generation) { try await provider.refreshCredential(rejected: rejected) }.output
            }
        } catch is DeadlineExceededError {
            throw TransportError.timedOut(after: timeout, url: nil)
        }
    }

    /// Records that the server answered a request sent with `snapshot`'s credential without refusing it: when
    /// that credential is still the current one and had not expired by `context`'s clock (the answer's
    /// arrival), it has served and earns one renewal. Costs nothing once the credential has served, or for a
    /// credential without an expiry (it is never refreshed before sending).
    func served(_ snapshot: Snapshot, context: ResilienceContext) {
        guard !snapshot.hasServed, let credential = snapshot.credential, credential.expiresAt != nil,
            !credential.expires(within: .zero, of: context.clock.now())
        else { return }
        state.withLock { state in
            if state.credentialNumber == snapshot.credentialNumber {
                state.servedCredential = snapshot.credentialNumber
            }
        }
    }

    /// What the requests waiting on a refresh that threw `error` get. A failure that the request's classifier
    /// (then the transport's) reads as transient and not as an authentication failure (offline, a timeout,
    /// the token endpoint's 503 or 429) says nothing about the session: it is passed on as a
    /// ``TransportError`` with that classification, so the pipeline may retry and nobody is told to sign in
    /// again. Anything else (the refresh token refused, a cancellation of the provider's own: the refresh
    /// task is never cancelled, so it is not the caller's) is session expired (`AUTH_001`).
    static func failure(of error: any Error, context: ResilienceContext) -> any Error {
        guard !(error is CancellationError) else { return AuthenticationFailure.sessionExpired() }
        var classification = CompositeErrorClassifier([context.classifier, TransportErrorClassifier.standard])
            .classification(of: error)
        guard classification.isTransient, classification.category != .authentication else {
            return AuthenticationFailure.sessionExpired(reason: "\(error)")
        }
        classification.message = "the credential could not be refreshed: \(classification.message ?? "\(error)")"
        return TransportError(classification)
    }

    /// Waits for the refresh round `task` (started from `generation`) as long as this caller may: a caller
    /// cancelled meanwhile leaves at once with `CancellationError`, one whose `context.deadline` passes first
    /// with ``TransportError/timedOut(after:url:)``; the refresh goes on for the others either way.
    private func wait(
        for task: Task<Snapshot, any Error>, from generation: Int, context: ResilienceContext
    ) async throws -> Snapshot {
        let waits = waits
        let wait: @Sendable () async throws -> Snapshot = {
            try await waits.run(generation) { try await task.value }.output
        }
        guard let deadline = context.deadline else { return try await wait() }
        do {
            return try await withDeadline(until: deadline, clock: context.clock, operation: wait)
        } catch is DeadlineExceededError {
            throw TransportError.timedOut(after: nil, url: nil)
        }
    }
}
