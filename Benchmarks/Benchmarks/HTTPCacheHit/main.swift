import Foundation
import ResilienceCore
import ResilienceTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The HTTP cache's hit path: `CachingTransport.send` answering a fresh stored response (a 2 KB JSON body with
// typical headers) from the in-memory store (budget ≤ 5 µs p50) and from the SQLite store (≤ 200 µs p50),
// and, as the baseline measured in the same run, the wrapped transport answering directly. Each round times
// `iterations` sequential hits in the thread's CPU time (a hit never suspends, so it stays on one thread, and
// on a shared machine waiting for a core is not the cache's cost); p50 and minimum over the rounds.
// Usage: swift run -c release --package-path Benchmarks HTTPCacheHit [rounds]

/// Answers every request with the same response, without I/O.
struct ConstantTransport: HTTPTransport {
    let response: HTTPResponse
    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse { response }
}

/// The CPU time this thread has used, in nanoseconds.
func threadCPUNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

func measure(rounds: Int, iterations: Int, _ body: () async throws -> Int) async rethrows -> [Double] {
    var sink = 0
    for _ in 0..<iterations { sink &+= try await body() }  // warm-up
    var perCall: [Double] = []
    for _ in 0..<rounds {
        let start = threadCPUNanoseconds()
        for _ in 0..<iterations { sink &+= try await body() }
        perCall.append((threadCPUNanoseconds() - start) / Double(iterations))
    }
    if sink == 42 { print("") }  // keeps the work observable
    return perCall.sorted()
}

func report(_ name: String, _ perCall: [Double], budget: Double? = nil) {
    let p50 = perCall[perCall.count / 2]
    let verdict = budget.map { p50 <= $0 ? "   (within \(Int($0)) ns)" : "   (OVER \(Int($0)) ns)" } ?? ""
    print(
        name.padding(toLength: 36, withPad: " ", startingAt: 0)
            + "p50 \(Int(p50.rounded())) ns   min \(Int(perCall[0].rounded())) ns" + verdict)
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
    report("wrapped transport alone", baseline)

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
