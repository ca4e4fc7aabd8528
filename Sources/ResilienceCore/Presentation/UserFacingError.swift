/// What to tell the person at the screen about a failure: true, short, and actionable.
public struct UserFacingError: Hashable, Sendable, CustomStringConvertible {
    /// How prominent the message should be.
    public enum Severity: String, Hashable, Sendable, Codable, CaseIterable {
        /// Partial failure; results are still shown.
        case info
        /// Degraded experience.
        case warning
        /// Nothing could be shown.
        case error
    }

    /// A short headline (`"You're offline"`).
    public var title: String
    /// One or two sentences a person understands and can act on. Never a raw error dump.
    public var message: String
    /// How prominent the message should be.
    public var severity: Severity
    /// Whether the situation can get better by itself or by the user's action.
    public var isRecoverable: Bool
    /// What the user can do (`"Pull to refresh"`), if anything.
    public var suggestedAction: String?
    /// Whether a Retry button makes sense now.
    public var showsRetry: Bool
    /// How long until retrying makes sense (for a countdown), if known.
    public var retryAfter: Duration?
    /// Details for support (codes, statuses); never shown as the main message.
    public var technicalDetails: String?
    /// The failure's stable code.
    public var code: FailureCode
    /// True when the message is that the device is offline: renderers show it as such (an offline symbol, no
    /// countdown), and the app refreshes by itself once the network is back.
    public var isOffline: Bool

    /// Creates a message.
    ///
    /// - Parameters:
    ///   - title: A short headline (`"You're offline"`).
    ///   - message: One or two sentences a person understands and can act on. Never a raw error dump.
    ///   - severity: How prominent the message should be.
    ///   - isRecoverable: Whether the situation can get better by itself or by the user's action.
    ///   - suggestedAction: What the user can do (`"Pull to refresh"`), if anything.
    ///   - showsRetry: Whether a Retry button makes sense now. Default: `false`.
    ///   - retryAfter: How long until retrying makes sense (for a countdown), if known.
    ///   - technicalDetails: Details for support (codes, statuses); never shown as the main message.
    ///   - code: The failure's stable code.
    ///   - isOffline: True when the message is that the device is offline. Default: `false`.
    public init(
        title: String,
        message: String,
        severity: Severity,
        isRecoverable: Bool,
        suggestedAction: String? = nil,
        showsRetry: Bool = false,
        retryAfter: Duration? = nil,
        technicalDetails: String? = nil,
        code: FailureCode,
        isOffline: Bool = false
    ) {
        self.title = title
        self.message = message
        self.severity = severity
        self.isRecoverable = isRecoverable
        self.suggestedAction = suggestedAction
        self.showsRetry = showsRetry
        self.retryAfter = retryAfter
        self.technicalDetails = technicalDetails
        self.code = code
        self.isOffline = isOffline
    }

    /// `title: message`.
    public var description: String { "\(title): \(message)" }
}
