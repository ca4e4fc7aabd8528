#if canImport(SwiftUI)
import Foundation
import ResilienceCore
import SwiftUI

extension View {
    /// Shows `error` as a banner over the top of this view, with a dismiss button and, when the error allows
    /// it, a Retry button that counts down ``UserFacingError/retryAfter`` before it enables itself.
    public func errorBanner(
        _ error: Binding<UserFacingError?>, strings: PresentationStrings = .english, retry: (() -> Void)? = nil
    ) -> some View {
        modifier(ErrorBannerModifier(error: error, strings: strings, retry: retry))
    }
}

/// Overlays an ``ErrorBanner`` while the bound error is set.
struct ErrorBannerModifier: ViewModifier {
    @Binding var error: UserFacingError?
    let strings: PresentationStrings
    let retry: (() -> Void)?

    func body(content: Content) -> some View {
        content.overlay(alignment: .top) {
            if let current = error {
                ErrorBanner(error: current, strings: strings, retry: retry) { error = nil }
                    .padding(.horizontal)
            }
        }
    }
}

/// The banner itself. The countdown is display-only and runs on the system clock through `TimelineView`
/// (the documented default for UI; policies never read it).
struct ErrorBanner: View {
    let error: UserFacingError
    let strings: PresentationStrings
    let retry: (() -> Void)?
    let dismiss: () -> Void
    @State private var shownAt = Date()

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
                TimelineView(.periodic(from: shownAt, by: 1)) { context in
                    let remaining = remainingSeconds(at: context.date)
                    if remaining > 0 {
                        Text(countdownLabel(remaining)).font(.footnote).monospacedDigit()
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

    private func remainingSeconds(at date: Date) -> Int64 {
        guard let retryAfter = error.retryAfter else { return 0 }
        let (seconds, attoseconds) = retryAfter.components
        let total = Double(seconds) + Double(attoseconds) / 1e18
        return Int64((total - date.timeIntervalSince(shownAt)).rounded(.up))
    }

    private func countdownLabel(_ seconds: Int64) -> String {
        let time = RelativeTimeFormatter(strings: strings).string(for: .seconds(seconds))
        return strings.string("banner.retryIn", ["time": time])
    }
}
#endif
