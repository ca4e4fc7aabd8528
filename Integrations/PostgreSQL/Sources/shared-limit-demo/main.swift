// shared-limit-demo: four OS processes share one 20 requests/s limit and one circuit breaker through
// PostgreSQL, toward a FaultServer on 127.0.0.1. The parent runs the server, the replicas and the script
// (the server fails for a while; PostgreSQL is stopped and started again), then checks the goals.
//
//   .ci/postgres.sh swift run --package-path Integrations/PostgreSQL --scratch-path .build-integrations \
//       shared-limit-demo --duration 30
//
// The PostgreSQL connection comes from the RESILIENCE_PG_* variables .ci/postgres.sh sets.
import Foundation
import PostgresNIO
import ResiliencePolicies
import ResiliencePostgreSQL
import ResilienceTesting
import ResilienceTransport

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let environment = ProcessInfo.processInfo.environment
let key = option("--key") ?? "demo-\(UInt32.random(in: 0...UInt32.max))"

func wallClock() -> Double { Date().timeIntervalSince1970 }

/// Appends lines to a file, from any task.
final class LineWriter: TelemetrySink, @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()
    let replica: Int

    init(path: String, replica: Int) {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        handle = FileHandle(forWritingAtPath: path)!
        self.replica = replica
    }

    func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        handle.write(Data((line + "\n").utf8))
    }

    func receive(_ event: ResilienceEvent) {
        let detail = event.transition.map(\.description) ?? event.detail ?? ""
        write("E \(wallClock()) \(replica) \(event.kind.rawValue) \(detail)")
    }
}

// MARK: Replica

func runReplica(index: Int, serverPort: Int, until end: Double, output: String) async throws {
    let writer = LineWriter(path: output, replica: index)
    var connection = PostgresClient.Configuration(
        host: environment["RESILIENCE_PG_HOST"] ?? "127.0.0.1",
        port: Int(environment["RESILIENCE_PG_PORT"] ?? "") ?? 5432,
        username: environment["RESILIENCE_PG_USER"] ?? "postgres", password: environment["RESILIENCE_PG_PASSWORD"],
        database: environment["RESILIENCE_PG_DATABASE"] ?? "postgres", tls: .disable)
    connection.options.connectTimeout = .milliseconds(500)
    var storeConfiguration = PostgresCoordinationStore.Configuration()
    storeConfiguration.callTimeout = .milliseconds(500)
    storeConfiguration.reconnectInterval = .milliseconds(500)
    let store = PostgresCoordinationStore(connection: connection, configuration: storeConfiguration)
    let running = Task { try await store.run() }
    defer { running.cancel() }

    var limiterConfiguration = SharedRateLimiter.Configuration(
        key: key, quota: SharedRateQuota(permits: 20, per: .seconds(1)))
    limiterConfiguration.batchSize = 4
    limiterConfiguration.failureMode = .failOpen(expectedReplicas: 4)
    limiterConfiguration.retryInterval = .milliseconds(500)
    let limiter = SharedRateLimiter(store: store, limiterConfiguration, telemetry: writer)

    var breakerConfiguration = SharedBreaker.Configuration(key: key, replica: "replica-\(index)")
    breakerConfiguration.failureThreshold = 3
    breakerConfiguration.openDuration = .constant(.seconds(2))
    breakerConfiguration.retryInterval = .milliseconds(500)
    breakerConfiguration.failureMode = .failOpen(expectedReplicas: 4)
    let breaker = SharedBreaker(store: store, breakerConfiguration, telemetry: writer)
    defer { breaker.shutdown() }

    let clock = ResilienceClock.continuous
    // The replica's waits end with its run: a permit that would come later is refused.
    let endOnClock = clock.now().advanced(by: .milliseconds(Int64(max(0, end - wallClock()) * 1000)))
    let context = ResilienceContext(key: key, deadline: endOnClock, clock: clock)
    let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(serverPort)/api")!)
    // The library's transport: each request's 2 s deadline runs on the clock, whatever FoundationNetworking does.
    let transport = URLSessionTransport()
    var lastState = BreakerState.closed
    while wallClock() < end {
        let state = breaker.metrics(now: clock.now()).state
        if state != lastState {
            writer.write("S \(wallClock()) \(index) \(state.rawValue)")
            lastState = state
        }
        let admission = breaker.admit(now: clock.now())
        guard case .admitted(let permit, _) = admission else {
            try await Task.sleep(for: .milliseconds(10))
            continue
        }
        let slot: RateLimitPermit
        do {
            slot = try await limiter.waitForPermit(context: context)
        } catch {
            breaker.record(.cancelled, for: permit, now: clock.now())
            try await Task.sleep(for: .milliseconds(10))
            continue
        }
        let sent = wallClock()
        var status = 0
        do {
            let attempt = ResilienceContext(key: key, deadline: clock.now().advanced(by: .seconds(2)), clock: clock)
            status = try await transport.send(request, context: attempt).status
        } catch {
            status = -1
        }
        writer.write("R \(sent) \(index) \(status) \(permit.isProbe ? 1 : 0)")
        limiter.release(slot, outcome: .accepted, now: clock.now())
        let outcome: BreakerOutcome =
            status == 200
            ? .success
            : .failure(FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: status))
        breaker.record(outcome, for: permit, now: clock.now())
    }
}

// MARK: Parent

struct Line {
    var kind: Character
    var time: Double
    var replica: Int
    var fields: [Substring]
}

func postgres(_ action: String) throws {
    guard let control = environment["RESILIENCE_PG_CTL"], let data = environment["RESILIENCE_PG_DATA"],
        let socket = environment["RESILIENCE_PG_SOCKET_DIR"], let port = environment["RESILIENCE_PG_PORT"]
    else { throw DemoError("RESILIENCE_PG_CTL, _DATA, _SOCKET_DIR and _PORT are needed to stop PostgreSQL") }
    var command = [control, "-D", data, "-w"]
    if action == "stop" {
        command += ["-m", "immediate", "stop"]
    } else {
        command += [
            "-l", "\(socket)/log", "-o", "-c listen_addresses=127.0.0.1 -p \(port) -k \(socket) -c fsync=off", "start",
        ]
    }
    if getuid() == 0 { command = ["/usr/sbin/runuser", "-u", "postgres", "--"] + command }
    // `system` waits for and reaps pg_ctl itself; the server it starts is detached from this process.
    let line = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    guard system(line + " > /dev/null 2>&1") == 0 else { throw DemoError("pg_ctl \(action) failed") }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func runParent(duration: Double) async throws -> Bool {
    let server = try FaultServer(
        configuration: {
            var configuration = FaultServerConfiguration()
            configuration.lifetime = .seconds(Int64(duration) + 60)
            return configuration
        }())
    defer { server.stop() }
    server.script("/api", .ok())
    // The script, in seconds from the start: the server fails, then PostgreSQL is stopped for 10 s (or a
    // third of a short run).
    let failAt = duration * 0.2, healAt = duration * 0.2 + 3
    let outage = min(10, duration / 3)
    let stopAt = duration * 0.45, restartAt = duration * 0.45 + outage
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shared-limit-demo-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let start = wallClock() + 1.5
    let end = start + duration
    var children: [Process] = []
    for index in 0..<4 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [
            "--replica", "\(index)", "--server-port", "\(server.port)", "--key", key, "--until", "\(end)",
            "--output", directory.appendingPathComponent("replica-\(index).log").path,
        ]
        try process.run()
        children.append(process)
    }
    print("shared-limit-demo: 4 replicas, 20 requests/s shared, \(Int(duration)) s; key \(key)")
    func sleep(until offset: Double) async throws {
        let wait = start + offset - wallClock()
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int64(wait * 1000))) }
    }
    try await sleep(until: failAt)
    server.script("/api", .status(503))
    let failedAt = wallClock()
    try await sleep(until: healAt)
    server.script("/api", .ok())
    try await sleep(until: stopAt)
    // Taken before `pg_ctl` runs: an immediate stop drops the connections at once, so a replica can see the
    // store fail before `pg_ctl` returns.
    let stoppedAt = wallClock()
    try postgres("stop")
    try await sleep(until: restartAt)
    try postgres("start")
    let restartedAt = wallClock()
    // Replicas stop at `end`; one still running 15 s later counts as hung and is stopped.
    while children.contains(where: \.isRunning) && wallClock() < end + 15 {
        try await Task.sleep(for: .milliseconds(100))
    }
    let hung = children.filter(\.isRunning)
    for child in hung { child.terminate() }

    // MARK: Analysis
    var lines: [Line] = []
    for index in 0..<4 {
        let text = try String(contentsOf: directory.appendingPathComponent("replica-\(index).log"), encoding: .utf8)
        for raw in text.split(separator: "\n") {
            let parts = raw.split(separator: " ")
            guard parts.count >= 3, let time = Double(parts[1]), let replica = Int(parts[2]) else { continue }
            lines.append(Line(kind: parts[0].first!, time: time, replica: replica, fields: Array(parts.dropFirst(3))))
        }
    }
    let requests = lines.filter { $0.kind == "R" }.sorted { $0.time < $1.time }
    var allPassed = true
    func report(_ goal: String, _ passed: Bool, _ detail: String) {
        allPassed = allPassed && passed
        print("\(passed ? "PASS" : "FAIL")  \(goal): \(detail)")
    }
    let crashed = children.filter { !$0.isRunning && $0.terminationStatus != 0 }.count
    report(
        "no replica crashed or hung", crashed == 0 && hung.isEmpty,
        "\(4 - crashed - hung.count) of 4 exited cleanly by the deadline")

    // Sliding 1-s windows starting at every request after the first second, outside the store outage.
    let outageWindow = (stoppedAt - 1)...(restartedAt + 2)
    var worst = 0, worstDuringOutage = 0
    var worstStart = 0.0
    for request in requests where request.time >= start + 1 {
        let count = requests.lazy.filter { $0.time >= request.time && $0.time < request.time + 1 }.count
        if outageWindow.contains(request.time) {
            worstDuringOutage = max(worstDuringOutage, count)
        } else {
            if count > worst { (worst, worstStart) = (count, request.time - start) }
        }
    }
    report(
        "≤ 21 requests in every 1-s window (store reachable)", worst <= 21,
        String(format: "worst window %d (from %.2f s)", worst, worstStart))
    print("      (while PostgreSQL was down, each replica at its 5/s share: worst window \(worstDuringOutage))")

    // Utilisation while healthy and coordinated: from 1 s to the failure, and from 2 s after the restart.
    let healthy = [(start + 1, start + failAt), (restartedAt + 2, end)]
    var served = 0
    var seconds = 0.0
    for (from, to) in healthy where to > from {
        served += requests.filter { $0.time >= from && $0.time < to }.count
        seconds += to - from
    }
    let utilisation = seconds > 0 ? Double(served) / (20 * seconds) : 0
    report(
        "utilisation ≥ 90 % of 20/s while healthy", utilisation >= 0.9,
        String(format: "%.1f %% (%d requests in %.1f s)", utilisation * 100, served, seconds))

    // Breaker: the first replica to see it open, the last ordinary call after that, the probes per open period.
    let opens = lines.filter { $0.kind == "S" && $0.fields.first == "open" && $0.time >= failedAt }.map(\.time)
    if let opened = opens.min() {
        let lastOrdinary = requests.filter { $0.time >= opened && $0.fields.count >= 2 && $0.fields[1] == "0" }
            .filter { $0.time < start + healAt }.map(\.time).max()
        let lag = lastOrdinary.map { $0 - opened } ?? 0
        report(
            "every replica stops within 1 s of the breaker opening", lag <= 1,
            String(format: "last ordinary call %.3f s after it opened", lag))
        let probes = requests.filter { $0.time >= opened && $0.time < start + healAt + 3 && $0.fields[1] == "1" }
        let periods = Dictionary(grouping: probes) { Int(($0.time - opened) / 2) }
        let perPeriod = periods.values.map(\.count)
        let probers = Set(probes.map(\.replica))
        report(
            "exactly one replica probes each half-open period", perPeriod.allSatisfy { $0 == 1 } && !probes.isEmpty,
            "\(probes.count) probes from replicas \(probers.sorted()) in \(periods.count) periods")
    } else {
        report("the shared breaker opened when the server failed", false, "no replica saw it open")
    }

    // The store outage: every replica degraded, followed its fail mode, and recovered within 2 s.
    let failures = lines.filter { $0.kind == "E" && $0.fields.first == "coordination-store-failed" }
    let recoveries = lines.filter {
        $0.kind == "E" && $0.fields.first == "coordination-store-recovered" && $0.time >= restartedAt
    }
    let degraded = Set(failures.filter { $0.time >= stoppedAt }.map(\.replica))
    let servedDuringOutage = requests.filter { $0.time >= stoppedAt + 1 && $0.time < restartedAt }.count
    report(
        "each replica fell back to its fail mode (fail-open, 5/s each)", degraded.count == 4 && servedDuringOutage > 0,
        "\(degraded.count) replicas degraded; \(servedDuringOutage) requests while PostgreSQL was down")
    var resume: [Double] = []
    for replica in 0..<4 {
        if let first = recoveries.filter({ $0.replica == replica }).map(\.time).min() {
            resume.append(first - restartedAt)
        }
    }
    report(
        "shared limiting resumed within 2 s of PostgreSQL's return", resume.count == 4 && (resume.max() ?? 99) <= 2,
        "resumed after " + resume.map { String(format: "%.2f s", $0) }.joined(separator: ", "))
    try? FileManager.default.removeItem(at: directory)
    return allPassed
}

// MARK: Entry point

if let replica = option("--replica").flatMap(Int.init), let port = option("--server-port").flatMap(Int.init),
    let until = option("--until").flatMap(Double.init), let output = option("--output")
{
    do {
        try await runReplica(index: replica, serverPort: port, until: until, output: output)
    } catch {
        FileHandle.standardError.write(Data("replica \(replica): \(error)\n".utf8))
        exit(1)
    }
} else {
    let duration = option("--duration").flatMap(Double.init) ?? 30
    do {
        exit(try await runParent(duration: duration) ? 0 : 1)
    } catch {
        FileHandle.standardError.write(Data("shared-limit-demo: \(error)\n".utf8))
        exit(2)
    }
}
