import ResilienceCore
import ResiliencePresentation
import ResilienceTesting
import Testing

@Suite("BannerSuppression")
struct BannerSuppressionTests {
    let offline = UserFacingError(
        title: "You're Offline", message: "Check your connection.", severity: .error, isRecoverable: true,
        code: .noConnection)
    let timeout = UserFacingError(
        title: "Request Timed Out", message: "Try again.", severity: .error, isRecoverable: true, code: .timedOut)

    @Test("The same banner is not shown twice within the window; a different one is")
    func suppression() {
        let manual = ManualClock()
        let suppression = BannerSuppression(window: .seconds(30), clock: ResilienceClock(manual))
        #expect(suppression.shouldShow(offline))
        #expect(!suppression.shouldShow(offline))
        #expect(suppression.shouldShow(timeout))
        manual.advance(by: .seconds(29))
        #expect(!suppression.shouldShow(offline))
        manual.advance(by: .seconds(1))
        #expect(suppression.shouldShow(offline))
        suppression.reset()
        #expect(suppression.shouldShow(timeout))
    }

    @Test("Memory stays bounded with many distinct banners")
    func bounded() {
        let manual = ManualClock()
        let suppression = BannerSuppression(window: .seconds(1000), maximumEntries: 4, clock: ResilienceClock(manual))
        for index in 0..<100 {
            manual.advance(by: .seconds(1))
            let error = UserFacingError(
                title: "T\(index)", message: "m", severity: .info, isRecoverable: true, code: .unknown)
            #expect(suppression.shouldShow(error))
        }
        let first = UserFacingError(title: "T0", message: "m", severity: .info, isRecoverable: true, code: .unknown)
        let last = UserFacingError(title: "T99", message: "m", severity: .info, isRecoverable: true, code: .unknown)
        #expect(suppression.shouldShow(first), "the oldest banner was evicted, so it may show again")
        #expect(!suppression.shouldShow(last), "the newest is still remembered")
    }

    @Test("A large bound costs each banner the same: 20,000 distinct banners in a window that holds them all")
    func largeBoundStaysLinear() {
        let manual = ManualClock()
        let count = 20_000
        let suppression = BannerSuppression(
            window: .seconds(1_000_000), maximumEntries: count, clock: ResilienceClock(manual))
        func banner(_ index: Int) -> UserFacingError {
            UserFacingError(title: "T\(index)", message: "m", severity: .info, isRecoverable: true, code: .unknown)
        }
        let started = ContinuousClock.now
        var shown = 0
        for index in 0..<count {
            manual.advance(by: .milliseconds(1))
            if suppression.shouldShow(banner(index)) { shown += 1 }
        }
        let elapsed = ContinuousClock.now - started
        #expect(shown == count)
        #expect(elapsed < .seconds(5), "20,000 banners took \(elapsed)")
        #expect(!suppression.shouldShow(banner(0)), "the window still holds the first banner")
        #expect(suppression.shouldShow(banner(count)))
        #expect(suppression.shouldShow(banner(0)), "the bound evicted the oldest banner shown")
        #expect(!suppression.shouldShow(banner(2)), "only the oldest was evicted")
        // Expired banners are forgotten: after the window, every one shows again.
        manual.advance(by: .seconds(1_000_000))
        #expect(suppression.shouldShow(banner(count - 1)))
        #expect(!suppression.shouldShow(banner(count - 1)))
    }
}

@Suite("TerminalRenderer")
struct TerminalRendererTests {
    let rateLimited = UserFacingError(
        title: "Rate Limit Reached", message: "Too many requests right now.\nTry again in 5 minutes.",
        severity: .warning, isRecoverable: true, retryAfter: .seconds(300), code: .rateLimited)

    @Test("Colour only on a terminal without NO_COLOR or TERM=dumb")
    func colourDecision() {
        #expect(TerminalRenderer(environment: [:], isTerminal: true).usesColor)
        #expect(!TerminalRenderer(environment: [:], isTerminal: false).usesColor)
        #expect(!TerminalRenderer(environment: ["NO_COLOR": "1"], isTerminal: true).usesColor)
        #expect(TerminalRenderer(environment: ["NO_COLOR": ""], isTerminal: true).usesColor)
        #expect(!TerminalRenderer(environment: ["TERM": "dumb"], isTerminal: true).usesColor)
    }

    @Test("The banner is one line, coloured by severity only when allowed")
    func banner() {
        let plain = TerminalRenderer(environment: [:], isTerminal: false).banner(rateLimited)
        #expect(
            plain
                == "⚠ Rate Limit Reached: Too many requests right now. Try again in 5 minutes. (Retry in 5 minutes) [NET_004]"
        )
        let coloured = TerminalRenderer(environment: [:], isTerminal: true).banner(rateLimited)
        #expect(coloured == "\u{1B}[33m" + plain + "\u{1B}[0m")
        #expect(!coloured.contains("\n"))
    }

    @Test("The status table is aligned and plain without colour")
    func table() {
        let rows = [
            SourceStatusRow(source: "Greenhouse", status: .ok, items: 120, attempts: 1, breakerState: .closed),
            SourceStatusRow(
                source: "Lever", status: .failed, items: 0, attempts: 3, breakerState: .open,
                lastErrorCode: .serverUnavailable),
            SourceStatusRow(source: "RSS", status: .cached, items: 8, attempts: 2, lastErrorCode: .timedOut),
        ]
        let text = TerminalRenderer(environment: ["NO_COLOR": "1"], isTerminal: true).table(rows)
        let expected = """
            SOURCE      STATUS  ITEMS  ATTEMPTS  BREAKER  LAST ERROR
            Greenhouse  ok      120    1         closed   -
            Lever       failed  0      3         open     NET_014
            RSS         cached  8      2         -        NET_002
            """
        #expect(text == expected)
        let coloured = TerminalRenderer(environment: [:], isTerminal: true).table(rows)
        #expect(coloured.contains("\u{1B}[31mLever"))
        #expect(coloured.split(separator: "\n").count == 4)
    }

    @Test("Hostile names with control characters stay on one line")
    func controlCharacters() {
        let renderer = TerminalRenderer(environment: [:], isTerminal: false)
        let table = renderer.table([SourceStatusRow(source: "evil\nname\u{1B}[31m", status: .failed)])
        #expect(table.split(separator: "\n").count == 2)
        #expect(!table.contains("\u{1B}"))
    }

    @Test("A name with a bidirectional override or a Unicode line separator neither reorders nor breaks the line")
    func bidiControlsAndSeparators() {
        let renderer = TerminalRenderer(environment: [:], isTerminal: false)
        // Shown as-is, "acme\u{202E}lanretni" reads "acmeinternal" and the rest of the row is reversed.
        let hostile = "acme\u{202E}lanretni\u{2066}x\u{2069}\u{2028}next\u{2029}line"
        let table = renderer.table([SourceStatusRow(source: hostile, status: .failed)])
        let banner = renderer.banner(
            UserFacingError(
                title: "Down\u{2028}FAKE", message: "Try \u{202E}later", severity: .error, isRecoverable: true,
                code: .serverUnavailable))
        for text in [table, banner] {
            #expect(!text.unicodeScalars.contains { $0.properties.isBidiControl }, "\(text.debugDescription)")
            #expect(
                !text.unicodeScalars.contains {
                    [.lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
                })
        }
        #expect(table.contains("acmelanretnix next line"))
        #expect(banner.contains("Down FAKE: Try later"))
        // A joiner inside an emoji sequence is not a control: it stays.
        #expect(renderer.table([SourceStatusRow(source: "👩\u{200D}💻 feed", status: .ok)]).contains("👩\u{200D}💻 feed"))
    }
}
