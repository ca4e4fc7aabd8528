import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the person is told when a call held for the network runs out of time: the device was offline, so the
/// message says so, never that a server was slow. The interactive preset on a ManualClock; no network.
@Suite("Offline until the deadline: what is presented (ManualClock)")
struct OfflineWaitPresentationTests {
    /// The classification of a call through the interactive preset while `monitor` is offline, after the clock
    /// has passed the preset's total deadline; the operation fails as URLSession does offline when it runs.
    static func failureAfterDeadline(
        monitor: ScriptedConnectivityMonitor, runsFirst: Bool
    ) async throws -> FailureClassification {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let pipeline = Pipeline.interactive(clock: clock, random: SharedRandomSource(seed: 1)) {
            $0.connectivity = monitor
        }
        let context = ResilienceContext(key: "jobs", clock: clock, classifier: TransportErrorClassifier.standard)
        let call = Task {
            try await pipeline.execute(context) { _ -> Int in
                if runsFirst { monitor.setOnline(false) }
                throw URLError(.notConnectedToInternet)
            }
        }
        while monitor.listenerCount == 0 { await Task.yield() }
        manual.advance(by: .seconds(3_600))
        do {
            _ = try await call.value
            Issue.record("the call succeeded")
            return .unknown
        } catch {
            return context.classify(error)
        }
    }

    @Test(
        "Offline the whole time, never run or run once: the message is offline, never 'the server took too long'",
        arguments: [false, true])
    func offlineUntilTheDeadline(runsFirst: Bool) async throws {
        let monitor = ScriptedConnectivityMonitor(runsFirst ? .satisfied : .unsatisfied)
        let failure = try await Self.failureAfterDeadline(monitor: monitor, runsFirst: runsFirst)
        #expect(failure.category == .networkUnreachable, "\(failure)")
        #expect(failure.code == .noConnection, "\(failure)")
        #expect(failure.isTransient == false)
        #expect(failure.requestWasNotSent)
        for language in PresentationStrings.bundledLanguages {
            let strings = PresentationStrings.bundled(language: language)
            let presenter = DefaultErrorPresenter(strings: strings)
            // The monitor says online again by the time the message is shown: still offline, the reason it failed.
            for context in [PresentationContext(), PresentationContext(isOnline: true)] {
                let shown = presenter.present(failure, context: context)
                #expect(shown.title == strings.string("offline.title"), "\(language): \(shown.title)")
                #expect(shown.title != strings.string("timeout.title"))
            }
        }
    }
}
