import ResilienceCore
import ResilienceTesting
import Testing

@Suite("ConnectivityMonitorConformance")
struct ConnectivityMonitorConformanceTests {
    @Test("The scripted monitor conforms")
    func scriptedConforms() async throws {
        try await ConnectivityMonitorConformance {
            let monitor = ScriptedConnectivityMonitor(.satisfied)
            return (monitor, { path in monitor.setPath(path) })
        }.check()
    }

    @Test("A monitor that never reports a change fails its cases within the bound instead of hanging")
    func silentMonitorFails() async {
        let clock = ManualClock()
        var kit = ConnectivityMonitorConformance {
            let monitor = ScriptedConnectivityMonitor(.satisfied)
            return (monitor, { _ in })  // presents nothing: the monitor never changes
        }
        kit.clock = ResilienceClock(clock)
        let running = Task { await kit.run() }
        // Each case that waits for a change sleeps on the manual clock until its bound: advance it until done.
        let driver = Task {
            while !Task.isCancelled {
                if !clock.advanceToNextDeadline() { await Task.yield() }
            }
        }
        let report = await running.value
        driver.cancel()
        await driver.value
        #expect(report.result("paths-start-with-current")?.passed == true)
        #expect(report.result("changes-in-order")?.violations.first?.detail.hasPrefix("no answer within") == true)
        #expect(report.result("wait-returns-at-once-or-wakes")?.passed == false)
        #expect(report.result("cancelled-wait-ends")?.passed == false)
        #expect(!report.conforms)
    }
}
