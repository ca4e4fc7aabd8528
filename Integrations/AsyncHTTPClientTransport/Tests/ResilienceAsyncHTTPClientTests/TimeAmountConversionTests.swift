import NIOCore
import Testing

@testable import ResilienceAsyncHTTPClient

/// The conversion of a `Duration` (a limit, a deadline's time left, a configured timeout) to SwiftNIO's `TimeAmount`.
@Suite("Duration to TimeAmount")
struct TimeAmountConversionTests {
    @Test("A duration is its whole nanoseconds; one past Int64 nanoseconds saturates towards its sign, never wraps")
    func saturates() {
        #expect(TimeAmount(clamping: .milliseconds(1500)) == .nanoseconds(1_500_000_000))
        #expect(TimeAmount(clamping: .milliseconds(-1500)) == .nanoseconds(-1_500_000_000))
        // 9,223,372,036 s fit in Int64 nanoseconds; their fraction carries the sum past Int64.max.
        #expect(TimeAmount(clamping: .seconds(9_223_372_036) + .milliseconds(900)) == .nanoseconds(.max))
        #expect(TimeAmount(clamping: .seconds(-9_223_372_036) - .milliseconds(900)) == .nanoseconds(.min))
        #expect(TimeAmount(clamping: .seconds(Int64.max)) == .nanoseconds(.max))
        #expect(TimeAmount(clamping: .seconds(Int64.min)) == .nanoseconds(.min))
    }
}
