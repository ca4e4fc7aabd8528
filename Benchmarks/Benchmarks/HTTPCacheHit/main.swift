import Foundation
import ResilienceCore
import ResilienceTransport

// The HTTP cache's hit path: `CachingTransport.send` answering a fresh stored response (a 2 KB JSON body with
// typical headers) from the in-memory store (budget ≤ 5 µs p50) and from the SQLite store (≤ 200 µs p50),
// and, as the baseline measured in the same run, the wrapped transport answering directly. Each round times
// `iterations` sequential hits with the continuous clock; p50 and minimum over the rounds.
// Usage: swift run -c release --package-path Benchmarks HTTPCacheHit [rounds]

/// Answers every request with the same response, without I/O.
struct ConstantTransport: HTTPTransport {
    let response: HTTPResponse
    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse { response }
}

func measure(rounds: Int, iterations: Int, _ body: () async throws -> Int) async rethrows -> [Double] {
    var sink = 0
    for _ in 0..<iterations { sink &+= try await body() }  // warm-up
    var perCall: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        let start = clock.now
        for _ in 0..<iterations { sink &+= try await body() }
        let elapsed = start.duration(to: clock.now)
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        perCall.append(nanoseconds / Double(iterations))
    }
    if sink == 42 { print("") }  // keeps the work observable
    return perCall.sorted()
}

func report(_ name: String, _ perCall: [Double], budget: Double) {
    let p50 = perCall[perCall.count / 2]
    let verdict = p50 <= budget ? "within" : "OVER"
    print(
        name.padding(toLength: 36, withPad: " ", startingAt: 0)
            + "p50 \(Int(p50.rounded())) ns   min \(Int(perCall[0].rounded())) ns   (\(verdict) \(Int(budget)) ns)")
}

func run() async throws {
    let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 25
    let body = Data(String(repeating: #"{"id":1,"title":"Swift engineer"},"#, count: 60).utf8)
    let response = HTTPResponse(
        status: 200,
        headers: [
            "Content-Type": "application/json", "Cache-Control": "max-age=3600, stale-if-error=86400",
            "ETag": "\"v1\"", "Last-Modified": "Tue, 24 Nov 2026 09:00:00 GMT", "Date": "Tue, 24 Nov 2026 09:00:00 GMT",
            "Vary": "Accept-Encoding",
        ],
        body: body)
    let origin = ConstantTransport(response: response)
    let request = HTTPRequest(
        url: URL(string: "https://api.example/jobs?page=1")!, headers: ["Accept-Encoding": "gzip"])
    let context = ResilienceContext(key: "bench")
    let now = Date(timeIntervalSince1970: 1_795_500_000)
    let wallClock: @Sendable () -> Date = { now.addingTimeInterval(0) }
    print("hit path, \(body.count)-byte body, \(rounds) rounds")

    let baseline = try await measure(rounds: rounds, iterations: 10_000) {
        try await origin.send(request, context: context).body.count
    }
    report("wrapped transport alone", baseline, budget: .infinity)

    let memory = CachingTransport(wrapping: origin, store: InMemoryHTTPCacheStore(), wallClock: wallClock)
    _ = try await memory.send(request, context: context)
    let memoryHits = try await measure(rounds: rounds, iterations: 10_000) {
        try await memory.send(request, context: context).body.count
    }
    report("hit, in-memory store", memoryHits, budget: 5_000)

    let path = FileManager.default.temporaryDirectory.appendingPathComponent("http-cache-bench-\(getpid()).sqlite").path
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let sqlite = CachingTransport(wrapping: origin, store: try SQLiteHTTPCacheStore(path: path), wallClock: wallClock)
    _ = try await sqlite.send(request, context: context)
    let sqliteHits = try await measure(rounds: rounds, iterations: 1_000) {
        try await sqlite.send(request, context: context).body.count
    }
    report("hit, SQLite store", sqliteHits, budget: 200_000)
}

try await run()
