import ResilienceCore

/// When the Retry button for a shown ``UserFacingError`` may be enabled, and the countdown until then: the
/// state behind a banner's or an error view's Retry button, as a value with no clock.
///
/// The countdown runs from the instant the error arrived (``show(_:at:)``). Showing a different error restarts
/// it from that error's own arrival; showing an equal error again keeps it running (two equal errors cannot be
/// told apart), and one shown again after `nil` starts afresh. Retry is enabled once the error's
/// ``UserFacingError/retryAfter`` has passed since its arrival, and at once when it has none (or a zero or
/// negative one). The time left is never negative, and an instant before the arrival counts as the arrival.
/// Instants come from the caller's clock: a ``ResilienceClock`` (a `ManualClock` in tests) or a view's timeline.
///
/// ```swift
/// var countdown = RetryCountdown()
/// countdown.show(error, at: clock.now())
/// if countdown.isRetryEnabled(at: clock.now()) {
///     enableRetryButton()
/// } else if let label = countdown.countdownText(at: clock.now()) {
///     showLabel(label)  // "Retry in 5 seconds"
/// }
/// ```
public struct RetryCountdown: Hashable, Sendable {
    /// The error shown, or `nil` when none is.
    public private(set) var error: UserFacingError?
    /// When the shown error arrived: the countdown's start.
    public private(set) var arrivedAt: ResilienceInstant

    /// Creates a countdown for `error`, which arrived at `arrivedAt`.
    ///
    /// - Parameters:
    ///   - error: The error shown, or `nil` when none is. Default: `nil`.
    ///   - arrivedAt: When it arrived: the countdown's start. Default: ``ResilienceInstant/origin``.
    public init(error: UserFacingError? = nil, arrivedAt: ResilienceInstant = .origin) {
        self.error = error
        self.arrivedAt = arrivedAt
    }

    /// This countdown once `error` is shown at `now`: unchanged when it already shows an equal error, otherwise
    /// a countdown for `error` starting at `now`.
    public func showing(_ error: UserFacingError?, at now: ResilienceInstant) -> RetryCountdown {
        error == self.error ? self : RetryCountdown(error: error, arrivedAt: now)
    }

    /// Shows `error` from `now`: a different error restarts the countdown at `now`, an equal one keeps it.
    public mutating func show(_ error: UserFacingError?, at now: ResilienceInstant) {
        self = showing(error, at: now)
    }

    /// True when a Retry button is offered at all: an error is shown and it ``UserFacingError/showsRetry``.
    public var offersRetry: Bool { error?.showsRetry ?? false }

    /// The time left at `now` until retrying is allowed: the error's ``UserFacingError/retryAfter`` less the time
    /// since it arrived, and zero once that has passed, when there is no error or no positive delay.
    public func remaining(at now: ResilienceInstant) -> Duration {
        guard let delay = error?.retryAfter, delay > .zero else { return .zero }
        // Both sides are non-negative, so the difference cannot overflow, however long the delay.
        let elapsed = now > arrivedAt ? arrivedAt.duration(to: now) : .zero
        return elapsed >= delay ? .zero : delay - elapsed
    }

    /// True when Retry is offered and its delay has passed at `now` (at once for an error with no delay).
    public func isRetryEnabled(at now: ResilienceInstant) -> Bool {
        offersRetry && remaining(at: now) == .zero
    }

    /// The countdown label at `now` (`"Retry in 5 seconds"`, the time rounded up, never below one second), or
    /// `nil` when Retry is not offered or already enabled.
    ///
    /// - Parameters:
    ///   - now: The instant to count at, on the clock ``arrivedAt`` was read from.
    ///   - strings: The table with the `banner.retryIn` and `time.*` keys. Default: `.english`.
    public func countdownText(at now: ResilienceInstant, strings: PresentationStrings = .english) -> String? {
        let left = remaining(at: now)
        guard offersRetry, left > .zero else { return nil }
        let time = RelativeTimeFormatter(strings: strings).string(for: left)
        return strings.string("banner.retryIn", ["time": time])
    }
}
