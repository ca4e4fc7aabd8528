import ResilienceCore

/// Decides whether a banner should be shown, so the same message is not shown twice within a window.
///
/// Two messages are "the same" when their code, title and message match. Time comes from the injected
/// clock. At most ``maximumEntries`` recent banners are remembered (the oldest is forgotten first), so
/// memory stays bounded, and a banner costs the same however many are remembered. Thread-safe.
///
/// ```swift
/// let suppression = BannerSuppression(window: .seconds(30), clock: clock)
/// if suppression.shouldShow(error) { showBanner(error) }
/// ```
public final class BannerSuppression: Sendable {
    private struct Fingerprint: Hashable, Sendable {
        var code: FailureCode
        var title: String
        var message: String
    }

    /// How long a shown banner suppresses its repeats.
    public let window: Duration
    /// The most banners remembered.
    public let maximumEntries: Int
    private let clock: ResilienceClock
    /// When each remembered banner was last shown, least recently shown first.
    private let shown = LockedState(initialState: RecencyTable<Fingerprint, ResilienceInstant>())

    /// Creates a policy suppressing repeats within `window` (30 seconds by default).
    ///
    /// - Parameters:
    ///   - window: How long a shown banner suppresses its repeats. Default: `.seconds(30)`.
    ///   - maximumEntries: The most banners remembered. Default: `64`.
    ///   - clock: The clock the window is measured on. Default: `.continuous`.
    public init(window: Duration = .seconds(30), maximumEntries: Int = 64, clock: ResilienceClock = .continuous) {
        self.window = window
        self.maximumEntries = max(1, maximumEntries)
        self.clock = clock
    }

    /// True when `error` was not shown within the window; records it as shown if so.
    public func shouldShow(_ error: UserFacingError) -> Bool {
        let now = clock.now()
        let key = Fingerprint(code: error.code, title: error.title, message: error.message)
        let window = window
        let limit = maximumEntries
        return shown.withLock { shown in
            if let last = shown[key], last.duration(to: now) < window { return false }
            // Shown in order of the clock, so the expired banners are the oldest ones: forget them from that end.
            while let oldest = shown.oldest, oldest.value.duration(to: now) >= window { shown.removeOldest() }
            if shown[key] == nil, shown.count >= limit { shown.removeOldest() }
            shown.setNewest(now, for: key)
            return true
        }
    }

    /// Forgets every shown banner (after the user changed context, for example).
    public func reset() {
        shown.withLock { $0.removeAll() }
    }
}
