import ResilienceCore
import ResiliencePresentation
import ResilienceTesting
import Testing

@Suite("RetryCountdown")
struct RetryCountdownTests {
    let rateLimited = UserFacingError(
        title: "Rate Limit Reached", message: "Too many requests right now.", severity: .warning,
        isRecoverable: true, showsRetry: true, retryAfter: .seconds(10), code: .rateLimited)
    let circuitOpen = UserFacingError(
        title: "Service Paused", message: "Trying again shortly.", severity: .warning, isRecoverable: true,
        showsRetry: true, retryAfter: .seconds(5), code: .circuitOpen)
    let timedOut = UserFacingError(
        title: "Request Timed Out", message: "Try again.", severity: .error, isRecoverable: true, showsRetry: true,
        code: .timedOut)

    @Test("A new error's countdown runs from its own arrival, not from the first error's")
    func newErrorRestarts() {
        let manual = ManualClock()
        let clock = ResilienceClock(manual)
        var countdown = RetryCountdown()
        countdown.show(rateLimited, at: clock.now())
        manual.advance(by: .seconds(8))
        #expect(countdown.remaining(at: clock.now()) == .seconds(2))

        countdown.show(circuitOpen, at: clock.now())
        #expect(countdown.arrivedAt == clock.now())
        #expect(countdown.remaining(at: clock.now()) == .seconds(5), "5 s from its arrival, not 5 - 8 s")
        #expect(!countdown.isRetryEnabled(at: clock.now()))
        manual.advance(by: .seconds(4))
        #expect(countdown.remaining(at: clock.now()) == .seconds(1))
        #expect(!countdown.isRetryEnabled(at: clock.now()))
        manual.advance(by: .seconds(1))
        #expect(countdown.isRetryEnabled(at: clock.now()))
    }

    @Test("Showing the same error again keeps its countdown running; one shown again after nil restarts")
    func sameErrorKeepsRunning() {
        let manual = ManualClock()
        let clock = ResilienceClock(manual)
        var countdown = RetryCountdown()
        countdown.show(rateLimited, at: clock.now())
        manual.advance(by: .seconds(6))
        countdown.show(rateLimited, at: clock.now())
        #expect(countdown.remaining(at: clock.now()) == .seconds(4))
        #expect(countdown.showing(rateLimited, at: clock.now()) == countdown)

        countdown.show(nil, at: clock.now())
        #expect(countdown.error == nil)
        #expect(!countdown.offersRetry)
        #expect(!countdown.isRetryEnabled(at: clock.now()))
        #expect(countdown.countdownText(at: clock.now()) == nil)
        manual.advance(by: .seconds(1))
        countdown.show(rateLimited, at: clock.now())
        #expect(countdown.remaining(at: clock.now()) == .seconds(10))
    }

    @Test("Retry is enabled only once the retry delay has passed since the error arrived")
    func enabledOnlyAfterDelay() {
        let manual = ManualClock()
        let clock = ResilienceClock(manual)
        let countdown = RetryCountdown(error: rateLimited, arrivedAt: clock.now())
        #expect(countdown.offersRetry)
        #expect(!countdown.isRetryEnabled(at: clock.now()), "a retry delay holds Retry back at first")
        #expect(countdown.countdownText(at: clock.now()) == "Retry in 10 seconds")
        manual.advance(by: .seconds(10) - .milliseconds(1))
        #expect(!countdown.isRetryEnabled(at: clock.now()))
        #expect(countdown.countdownText(at: clock.now()) == "Retry in 1 second")
        manual.advance(by: .milliseconds(1))
        #expect(countdown.isRetryEnabled(at: clock.now()))
        #expect(countdown.countdownText(at: clock.now()) == nil)
    }

    @Test("An error with no retry delay (none, zero or negative) enables Retry at once")
    func noDelayEnablesAtOnce() {
        let now = ResilienceInstant(offset: .seconds(42))
        for retryAfter: Duration? in [nil, .zero, .seconds(-3)] {
            var error = timedOut
            error.retryAfter = retryAfter
            let countdown = RetryCountdown(error: error, arrivedAt: now)
            #expect(countdown.isRetryEnabled(at: now))
            #expect(countdown.remaining(at: now) == .zero)
            #expect(countdown.countdownText(at: now) == nil)
        }
    }

    @Test("An error that offers no Retry never enables it, whatever the time")
    func noRetryOffered() {
        var error = rateLimited
        error.showsRetry = false
        let countdown = RetryCountdown(error: error, arrivedAt: .origin)
        let later = ResilienceInstant.origin.advanced(by: .seconds(60))
        #expect(!countdown.offersRetry)
        #expect(!countdown.isRetryEnabled(at: later))
        #expect(countdown.countdownText(at: .origin) == nil)
    }

    @Test("The time left is never negative: long after the delay, and at an instant before the arrival")
    func neverNegative() {
        let arrival = ResilienceInstant(offset: .seconds(100))
        let countdown = RetryCountdown(error: rateLimited, arrivedAt: arrival)
        #expect(countdown.remaining(at: arrival.advanced(by: .seconds(3600))) == .zero)
        #expect(countdown.remaining(at: .origin) == .seconds(10), "a reading before the arrival counts from it")
        for second in 0...30 {
            let now = arrival.advanced(by: .seconds(second))
            #expect(countdown.remaining(at: now) >= .zero)
            if let text = countdown.countdownText(at: now) { #expect(!text.contains("-")) }
        }
    }

    @Test("A huge retry delay counts down without overflowing")
    func hugeDelay() {
        var error = rateLimited
        error.retryAfter = .seconds(Int64.max)
        let arrival = ResilienceInstant(offset: .seconds(1_000_000))
        let countdown = RetryCountdown(error: error, arrivedAt: arrival)
        let now = arrival.advanced(by: .seconds(1))
        #expect(countdown.remaining(at: now) == .seconds(Int64.max) - .seconds(1))
        #expect(!countdown.isRetryEnabled(at: now))
        #expect(countdown.countdownText(at: now, strings: .bundled(language: "de"))?.isEmpty == false)
    }
}
