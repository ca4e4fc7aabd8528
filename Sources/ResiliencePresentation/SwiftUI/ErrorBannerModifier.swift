#if canImport(SwiftUI)
import Foundation
import ResilienceCore
import SwiftUI

extension View {
    /// Shows `error` as a banner over the top of this view, with a dismiss button and, when the error allows
    /// it, a Retry button that counts down ``UserFacingError/retryAfter`` from that error's arrival before it enables
    /// itself (a ``RetryCountdown``).
    public func errorBanner(
        _ error: Binding<UserFacingError?>, strings: PresentationStrings = .english, retry: (() -> Void)? = nil
    ) -> some View {
        modifier(ErrorBannerModifier(error: error, strings: strings, retry: retry))
    }
}

/// Overlays an `ErrorBanner` while the bound error is set, and keeps that error's ``RetryCountdown``: a new
/// error restarts it from its own arrival.
struct ErrorBannerModifier: ViewModifier {
    @Binding var error: UserFacingError?
    let strings: PresentationStrings
    let retry: (() -> Void)?
    @State private var countdown: RetryCountdown

    init(error: Binding<UserFacingError?>, strings: PresentationStrings, retry: (() -> Void)?) {
        _error = error
        self.strings = strings
        self.retry = retry
        // An error already set counts from now; SwiftUI keeps this first value for as long as the view lives.
        _countdown = State(
            initialValue: RetryCountdown(error: error.wrappedValue, arrivedAt: .init(displayDate: Date())))
    }

    func body(content: Content) -> some View {
        content
            .overlay(alignment: .top) {
                if let current = error {
                    ErrorBanner(error: current, countdown: countdown, strings: strings, retry: retry) { error = nil }
                        .padding(.horizontal)
                }
            }
            .onChange(of: error) { newError in
                countdown.show(newError, at: ResilienceInstant(displayDate: Date()))
            }
    }
}

/// The banner itself. The countdown (a ``RetryCountdown``) is display-only and runs on the system clock through
/// `TimelineView` (the documented default for UI; policies never read it).
struct ErrorBanner: View {
    let error: UserFacingError
    let countdown: RetryCountdown
    let strings: PresentationStrings
    let retry: (() -> Void)?
    let dismiss: () -> Void

    var body: some View {
        HStack(alignment: .top, spacing: 8) {
            Image(systemName: error.isOffline ? "wifi.slash" : SeverityStyle.symbol(error.severity))
                .foregroundStyle(SeverityStyle.color(error.severity))
            VStack(alignment: .leading, spacing: 2) {
                Text(error.title).font(.subheadline).bold()
                Text(error.message).font(.footnote)
            }
            Spacer(minLength: 0)
            if error.showsRetry, let retry {
                TimelineView(.periodic(from: countdown.arrivedAt.displayDate, by: 1)) { context in
                    let now = ResilienceInstant(displayDate: context.date)
                    // Until the modifier has recorded this error's arrival, it counts from this frame.
                    let shown = countdown.showing(error, at: now)
                    if let label = shown.countdownText(at: now, strings: strings) {
                        Text(label).font(.footnote).monospacedDigit()
                    } else {
                        Button(strings.string("action.retry")) {
                            dismiss()
                            retry()
                        }
                    }
                }
            }
            Button(action: dismiss) {
                Image(systemName: "xmark")
            }
            .accessibilityLabel(strings.string("action.dismiss"))
        }
        .padding(12)
        .background(SeverityStyle.color(error.severity).opacity(0.15), in: RoundedRectangle(cornerRadius: 10))
    }
}
#endif
