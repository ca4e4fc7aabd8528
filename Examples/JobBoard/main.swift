// `swift run job-board`: six job sources on an embedded loopback FaultServer, failing in realistic ways, run
// through the ResilienceKit composition root for a few refresh rounds.
import Foundation
import ResilienceKit
import ResilienceTesting

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("job-board: \(message)\n".utf8))
    exit(code)
}

let options: DemoOptions
do {
    options = try DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message { fail(message + "\n" + DemoOptions.usage, code: 2) }
    print(DemoOptions.usage)
    exit(0)
}

let boards: DemoBoards
do {
    boards = try DemoBoards(seed: options.seed, chaos: options.chaos, lifetime: options.serverLifetime)
} catch {
    fail("could not start the embedded FaultServer on 127.0.0.1 (\(error)); nothing was fetched", code: 1)
}
let scenario = JobBoardScenario(upstreams: boards.upstreams, seed: options.seed)

var environment = ProcessInfo.processInfo.environment
if options.noColor { environment["NO_COLOR"] = "1" }
let renderer = TerminalRenderer(environment: environment, isTerminal: isatty(STDOUT_FILENO) == 1)
let columns = environment["COLUMNS"].flatMap { Int($0) } ?? 100
let view: LiveView? = options.json ? nil : LiveView(renderer: renderer, columns: columns)
let root = scenario.root
let ids = scenario.aggregator.sourceIDs

if options.describe {
    print(root.configurationDescription)
    boards.server.stop()
    exit(0)
}

if view != nil {
    print("ResilienceKit job board: \(ids.count) sources on an embedded FaultServer at \(boards.server.baseURL)")
    print("(everything is simulated on loopback; no internet is used)")
    for role in boards.roles { print("  \(role.id.rawValue): \(role.simulates)") }
    print("Every source runs its own copy of one pipeline preset; workable-soylent overrides its breaker (rate-limit,")
    print("opens on the first 429). `job-board --describe` prints every stage and setting.")
    print("")
}

func breakerState(_ id: SourceID) -> BreakerState? {
    root.statistics().sources[id.rawValue]?.breakerState
}

let started = ContinuousClock.now
var lastOutcome: FetchOutcome<Job>?
var lastFetched: ContinuousClock.Instant?
for round in 1...options.rounds {
    // `--offline-at`: the device loses its network as the round starts. What the person sees is only what is
    // true: they are offline, with the jobs already on screen and how old they are.
    var reconnection: Task<Void, Never>?
    let roundStarted = ContinuousClock.now
    var firstAnswer: ContinuousClock.Instant?
    let waitsBefore = scenario.connectivityWaits.recorded.count
    let retriesBefore = root.statistics().retryAttempts
    let offlineRequestsBefore = scenario.network.requestsWhileOffline
    if round == options.offlineAt {
        reconnection = scenario.network.dropConnection(for: options.offlineFor)
        let context = PresentationContext(
            itemNoun: "jobs", itemsShown: lastOutcome?.items.count ?? 0, isOffline: true,
            dataAge: lastFetched.map { $0.duration(to: .now) })
        if view != nil, let offline = root.configuration.presenter.present(context) {
            print("Round \(round): the network is gone for \(options.offlineFor.formattedSeconds)")
            print(renderer.banner(offline))
        }
    }
    var rows = ids.map { SourceStatusRow(source: $0.rawValue, status: .waiting, breakerState: breakerState($0)) }
    var reports: [SourceID: SourceReport] = [:]
    func reasons() -> [String] { ids.compactMap { reports[$0]?.reason } }
    view?.update(round: round, of: options.rounds, rows: rows, reasons: [], completed: 0, latest: nil)
    do {
        for try await step in scenario.root.progress(for: SourceQuery()) {
            switch step {
            case .sourceCompleted(let report, let completed, _):
                if firstAnswer == nil { firstAnswer = .now }
                reports[report.id] = report
                if let index = ids.firstIndex(of: report.id) {
                    rows[index] = report.row(breaker: breakerState(report.id))
                }
                view?.update(
                    round: round, of: options.rounds, rows: rows, reasons: reasons(), completed: completed,
                    latest: report)
            case .finished(let outcome):
                lastOutcome = outcome
            }
        }
    } catch {
        fail("round \(round) ended with \(error)", code: 1)
    }
    lastFetched = .now
    if let view, let outcome = lastOutcome {
        let message = outcome.message.map(renderer.banner) ?? "✔ Every source delivered."
        view.finish(rows: rows, reasons: reasons(), message: "\(outcome.items.count) jobs shown. " + message)
    }
    if let reconnection {
        await reconnection.value
        let waited = roundStarted.duration(to: firstAnswer ?? .now)
        let pipelineWaits = scenario.connectivityWaits.recorded.count - waitsBefore
        let wasted = scenario.network.requestsWhileOffline - offlineRequestsBefore
        let retries = root.statistics().retryAttempts - retriesBefore
        if view != nil {
            var line = "Back online. The fetch waited \(waited.formattedSeconds) for the network"
            if pipelineWaits > 0 { line += " (\(pipelineWaits) pipelines held their calls in their own stage)" }
            if wasted == 0 {
                line += "; no request was tried while offline, so no attempt, retry or breaker failure went to the "
                line +=
                    "lost network (\(retries) \(retries == 1 ? "retry" : "retries") this round, all after server failures)."
            } else {
                line += "; \(wasted) requests were still tried while offline."
            }
            print(line)
            print("")
        }
    }
    if round < options.rounds { try? await Task.sleep(for: .milliseconds(600)) }
}
let duration = started.duration(to: .now)
if view != nil { for note in boards.feedNotes(warnings: scenario.hooliWarnings.withLock { $0 }) { print(note) } }

guard let outcome = lastOutcome else { fail("no round finished", code: 1) }
let message = outcome.message
let summary = DemoSummary(
    options: options, boards: boards, scenario: scenario, outcome: outcome, duration: duration,
    statistics: root.statistics(),
    health: root.health())
boards.server.stop()
if options.json {
    do {
        print(try summary.json())
    } catch {
        fail("could not encode the summary: \(error)", code: 1)
    }
} else {
    print(summary.text(banner: message.map(renderer.banner)))
}
