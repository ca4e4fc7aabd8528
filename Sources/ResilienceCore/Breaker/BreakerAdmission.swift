/// A breaker's answer to "may this call run?".
public enum BreakerAdmission: Hashable, Sendable {
    /// Run the call, then record its outcome with the permit.
    case admitted(BreakerPermit, transition: BreakerTransition?)
    /// Do not run the call; the breaker expects to admit calls again after `retryAfter`.
    case rejected(retryAfter: Duration, state: BreakerState)
}
