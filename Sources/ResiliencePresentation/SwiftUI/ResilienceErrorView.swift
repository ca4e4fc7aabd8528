#if canImport(SwiftUI)
import Foundation
import ResilienceCore
import SwiftUI

/// A view for a failure with nothing else to show: symbol, title, message, suggested action and a Retry
/// button when ``UserFacingError/showsRetry`` is true.
public struct ResilienceErrorView: View {
    private let error: UserFacingError
    private let strings: PresentationStrings
    private let retry: (() -> Void)?

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
                Button(strings.string("action.retry"), action: retry)
            }
        }
        .padding()
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
