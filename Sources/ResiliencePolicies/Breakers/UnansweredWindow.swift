/// Tells a hung dependency from a slow one before every call's timeout has fired: no call of a closed
/// breaker has succeeded for a whole window while calls waited, and at least `minimumCalls` calls since the
/// last success are still waiting or have failed.
///
/// A server that stops serving but keeps accepting (a stall: a stuck lock, a full thread pool, a garbage
/// collection pause) answers nothing, so its calls fail only when their attempt timeouts fire, 10–60 s
/// later. By then every client has queued that many seconds of requests in the server, which it still works
/// through after the stall, whether or not their clients still wait: the recovery after the stall lasts as
/// long as the clients kept sending into it. Waiting calls without a success are the earliest evidence a
/// client has, so the breaker judges them as it judges a window of failures.
///
/// "A whole window" is at least the rule's window, and at least as long as the slowest success of the
/// current closed period (the call whose success closed it included): a dependency whose answers are slow, but
/// arrive, never looks silent. A breaker that has not seen a success since it was created or opened does not
/// judge silence, since it knows nothing of the dependency's usual latency; its calls' timeouts still count.
/// Only calls the closed breaker admitted in its current generation are followed, and a call a stage inside the
/// breaker holds (``CallHoldObserver``) waits only from its release.
struct UnansweredWindow: Sendable {
    /// The shortest silence that counts.
    let window: Duration
    /// Calls since the last success (waiting, or failed) that the silence needs to count.
    let minimumCalls: Int
    /// Calls admitted by the closed breaker and not finished yet.
    private(set) var waiting = 0
    /// Calls that failed since the last success (a timeout is how an unanswered call ends).
    private(set) var failedSinceSuccess = 0
    /// Since when no call has succeeded while calls waited; `nil` until the first success of this closed
    /// period.
    private(set) var quietSince: ResilienceInstant?
    /// The longest a success of this closed period took.
    private(set) var slowestSuccess: Duration = .zero

    init(window: Duration, minimumCalls: Int) {
        self.window = window
        self.minimumCalls = max(1, minimumCalls)
    }

    /// Counts a call the closed breaker admitted at `now`, or one a stage inside it stopped holding at `now`.
    mutating func admitted(now: ResilienceInstant) {
        // Silence only counts while someone waits for an answer: it starts again when the first call waits.
        if waiting == 0, quietSince != nil { quietSince = now }
        waiting += 1
    }

    /// Stops counting a waiting call: a stage inside the breaker holds it before it is sent. Returns whether a
    /// waiting call was counted to stop counting (only then may its release count it again).
    mutating func held() -> Bool {
        guard waiting > 0 else { return false }
        waiting -= 1
        return true
    }

    /// Counts the end of a call the closed breaker admitted at `admittedAt` (`succeeded`: it succeeded).
    mutating func finished(admittedAt: ResilienceInstant, succeeded: Bool, now: ResilienceInstant) {
        waiting = max(0, waiting - 1)
        guard succeeded else {
            failedSinceSuccess += 1
            return
        }
        failedSinceSuccess = 0
        quietSince = now
        slowestSuccess = max(slowestSuccess, admittedAt.duration(to: now))
    }

    /// Whether, at `now`, calls have waited a whole window without a success, and enough of them since the
    /// last success are still waiting or have failed.
    func isSilent(now: ResilienceInstant) -> Bool {
        guard let quietSince, waiting > 0, waiting + failedSinceSuccess >= minimumCalls else { return false }
        return quietSince.duration(to: now) >= max(window, slowestSuccess)
    }

    /// Forgets everything: the breaker opened (its waiting calls belong to an older generation).
    mutating func clear() {
        waiting = 0
        failedSinceSuccess = 0
        quietSince = nil
        slowestSuccess = .zero
    }

    /// Starts a closed period with the call (a probe, or a hung dependency's late answer; admitted at
    /// `admittedAt`) whose success at `now` closed the breaker.
    mutating func closed(bySuccessAdmittedAt admittedAt: ResilienceInstant, now: ResilienceInstant) {
        clear()
        quietSince = now
        slowestSuccess = admittedAt.duration(to: now)
    }
}
