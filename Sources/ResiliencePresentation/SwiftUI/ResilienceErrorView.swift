#if canImport(SwiftUI)
import Foundation
import ResilienceCore
import SwiftUI

/// A view for a failure with nothing else to show: symbol, title, message, suggested action and a Retry
/// button when ``UserFacingError/showsRetry`` is true. The button stays disabled, with a countdown under it,
/// until the error's ``UserFacingError/retryAfter`` has passed since it was shown (a ``RetryCountdown``).
public struct ResilienceErrorView: View {
    private let error: UserFacingError
    private let strings: PresentationStrings
    private let retry: (() -> Void)?
    @State private var countdown: RetryCountdown

    /// Creates the view; `retry` is called when the Retry button is tapped.
    ///
    /// - Parameters:
    ///   - error: The message to show (title, message, suggested action, retry countdown).
    ///   - strings: The strings for labels such as the Retry button. Default: `.english`.
    ///   - retry: Called when the Retry button is tapped; the button is shown only when this is given and the error
    ///     ``UserFacingError/showsRetry``.
    public init(_ error: UserFacingError, strings: PresentationStrings = .english, retry: (() -> Void)? = nil) {
        self.error = error
        self.strings = strings
        self.retry = retry
        // Counted from now; SwiftUI keeps this first value for as long as the view lives (`onChange` moves it on).
        _countdown = State(initialValue: RetryCountdown(error: error, arrivedAt: .init(displayDate: Date())))
    }

    /// The content.
    public var body: some View {
        VStack(spacing: 12) {
            Image(systemName: error.isOffline ? "wifi.slash" : SeverityStyle.symbol(error.severity))
                .font(.largeTitle)
                .foregroundStyle(SeverityStyle.color(error.severity))
            Text(error.title)
                .font(.headline)
            Text(error.message)
                .font(.body)
                .foregroundStyle(.secondary)
                .multilineTextAlignment(.center)
            if let action = error.suggestedAction {
                Text(action)
                    .font(.footnote)
                    .foregroundStyle(.secondary)
            }
            if error.showsRetry, let retry {
                TimelineView(.periodic(from: countdown.arrivedAt.displayDate, by: 1)) { context in
                    let now = ResilienceInstant(displayDate: context.date)
                    // Until `onChange` has recorded a new error's arrival, it counts from this frame.
                    let shown = countdown.showing(error, at: now)
                    Button(strings.string("action.retry"), action: retry)
                        .disabled(!shown.isRetryEnabled(at: now))
                    if let label = shown.countdownText(at: now, strings: strings) {
                        Text(label)
                            .font(.footnote)
                            .monospacedDigit()
                            .foregroundStyle(.secondary)
                    }
                }
            }
        }
        .padding()
        .onChange(of: error) { newError in
            countdown.show(newError, at: ResilienceInstant(displayDate: Date()))
        }
    }
}

/// Symbols and colours per severity, shared by the SwiftUI views.
enum SeverityStyle {
    static func symbol(_ severity: UserFacingError.Severity) -> String {
        switch severity {
        case .info: "info.circle"
        case .warning: "exclamationmark.triangle"
        case .error: "xmark.octagon"
        }
    }

    static func color(_ severity: UserFacingError.Severity) -> Color {
        switch severity {
        case .info: .blue
        case .warning: .orange
        case .error: .red
        }
    }
}

/// The SwiftUI views' display timeline: the system clock `TimelineView` ticks on, as instants measured from the
/// reference date, for a ``RetryCountdown``. Display-only; policies never read it.
extension ResilienceInstant {
    init(displayDate date: Date) {
        self.init(offset: .seconds(date.timeIntervalSinceReferenceDate))
    }

    var displayDate: Date {
        let (seconds, attoseconds) = offset.components
        return Date(timeIntervalSinceReferenceDate: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
#endif
