import ResilienceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// RFC 9651 parsing speed: a 64-member structured dictionary (the budget is 10 µs per parse), the same parse
// followed by reading every member (key, bare item or items, every parameter), its serialisation, a RateLimit/RateLimit-Policy pair read into a ServerQuota, and, as the baseline measured in
// the same run, a checksum over the same bytes. Times are the thread's CPU time per call (the machine is
// shared: waiting for a core is not the parser's cost), p50 and minimum over the rounds.
// Usage: swift run -c release --package-path Benchmarks StructuredFieldParsing [rounds | MODE N], where MODE
// is parse-only, parse-and-read-only or serialise-only: N calls of that operation and nothing else, for
// callgrind (instructions per call do not depend on what else the machine runs).
//
// The dictionary mixes what real fields carry: integers, decimals, tokens, quoted strings, booleans, byte
// sequences, inner lists and parameters (members like `m17=(a b);q=0.5`), about 1.3 KB.

func makeDictionary(members: Int) -> String {
    (0..<members).map { index in
        let key = "m\(index)"
        switch index % 8 {
        case 0: return "\(key)=\(index * 1_000)"
        case 1: return "\(key)=\(index).25;u=?0"
        case 2: return "\(key)=tok\(index)/v1"
        case 3: return "\(key)=\"text value \(index)\""
        case 4: return "\(key)"
        case 5: return "\(key)=:aGVsbG8gd29ybGQ=:"
        case 6: return "\(key)=(a b \(index));q=0.5"
        default: return "\(key)=\(index);r=\(index % 3);t=30"
        }
    }.joined(separator: ", ")
}

/// The CPU time this thread has used, in nanoseconds: on a shared machine, time spent waiting for a core
/// while other processes run is not counted, unlike wall-clock time.
func threadCPUNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// Runs `body` `iterations` times per round and returns each round's thread CPU time per call, in
/// nanoseconds, sorted.
func measure(rounds: Int, iterations: Int, _ body: () -> Int) -> [Double] {
    var sink = 0
    for _ in 0..<iterations { sink &+= body() }  // warm-up
    var perCall: [Double] = []
    for _ in 0..<rounds {
        let start = threadCPUNanoseconds()
        for _ in 0..<iterations { sink &+= body() }
        perCall.append((threadCPUNanoseconds() - start) / Double(iterations))
    }
    if sink == 42 { print("") }  // keeps the work observable
    return perCall.sorted()
}

func report(_ name: String, _ perCall: [Double]) {
    let p50 = perCall[perCall.count / 2]
    let minimum = perCall[0]
    print(
        name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + "p50 \(String(Int(p50.rounded()))) ns   min \(String(Int(minimum.rounded()))) ns")
}

/// Reads every member of `dictionary`: its key, its bare item or inner list items, and every parameter.
func readEveryMember(_ dictionary: StructuredFieldDictionary) -> Int {
    var total = 0
    for (key, member) in dictionary {
        total &+= key.utf8.count
        switch member {
        case .item(let item):
            total &+= weight(item.bareItem) &+ weight(item.parameters)
        case .innerList(let list):
            for item in list.items { total &+= weight(item.bareItem) &+ weight(item.parameters) }
            total &+= weight(list.parameters)
        }
    }
    return total
}

/// A number that depends on the bare item's value, so that reading it cannot be optimised away.
func weight(_ bareItem: StructuredFieldBareItem) -> Int {
    switch bareItem {
    case .integer(let value), .date(let value): return Int(truncatingIfNeeded: value)
    case .decimal(let value): return Int(truncatingIfNeeded: value.thousandths)
    case .string(let text), .token(let text), .displayString(let text): return text.utf8.count
    case .byteSequence(let bytes): return bytes.count
    case .boolean(let value): return value ? 1 : 0
    }
}

/// A number that depends on every parameter's key and value.
func weight(_ parameters: StructuredFieldParameters) -> Int {
    var total = 0
    for (key, value) in parameters { total &+= key.utf8.count &+ weight(value) }
    return total
}

/// A mode the benchmark does not know.
struct UsageError: Error, CustomStringConvertible {
    /// The mode given.
    let mode: String
    /// What was wrong.
    var description: String { "unknown mode \(mode): use parse-only, parse-and-read-only or serialise-only" }
}

/// Everything runs inside a function so that the values measured are locals, not top-level globals.
func run() throws {
    let field = makeDictionary(members: 64)
    if let mode = CommandLine.arguments.dropFirst().first, mode.hasSuffix("-only") {
        let count = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init) ?? 100_000
        let parsed = try StructuredFieldDictionary(parsing: field)
        var total = 0
        for _ in 0..<count {
            switch mode {
            case "parse-only": total &+= (try? StructuredFieldDictionary(parsing: field))?.count ?? 0
            case "parse-and-read-only":
                total &+= (try? StructuredFieldDictionary(parsing: field)).map(readEveryMember) ?? 0
            case "serialise-only": total &+= (try? parsed.serialized())?.utf8.count ?? 0
            default: throw UsageError(mode: mode)
            }
        }
        print("\(count) × \(mode.dropLast(5)): \(total)")
        return
    }
    let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 25
    let parsed = try StructuredFieldDictionary(parsing: field)
    precondition(parsed.count == 64)
    print("64-member dictionary: \(field.utf8.count) bytes, \(rounds) rounds")

    let checksum = measure(rounds: rounds, iterations: 20_000) { field.utf8.reduce(0) { $0 &+ Int($1) } }
    report("baseline: checksum of the same bytes", checksum)
    let parse = measure(rounds: rounds, iterations: 20_000) {
        (try? StructuredFieldDictionary(parsing: field))?.count ?? 0
    }
    report("parse 64-member dictionary", parse)
    let parseAndRead = measure(rounds: rounds, iterations: 20_000) {
        (try? StructuredFieldDictionary(parsing: field)).map(readEveryMember) ?? 0
    }
    report("parse it and read every member", parseAndRead)
    let serialise = measure(rounds: rounds, iterations: 20_000) { (try? parsed.serialized())?.utf8.count ?? 0 }
    report("serialise 64-member dictionary", serialise)
    let rateLimit = #""hour";r=40;t=600, "minute";r=0;t=20"#
    let policy = #""hour";q=1000;w=3600, "minute";q=60;w=60"#
    let quota = measure(rounds: rounds, iterations: 100_000) {
        ServerQuota(rateLimitField: rateLimit, policyField: policy)?.remaining ?? -1
    }
    report("RateLimit + RateLimit-Policy -> ServerQuota", quota)
    let budget = 10_000.0
    print(parse[parse.count / 2] <= budget ? "within the 10 µs budget" : "OVER the 10 µs budget")
}

try run()
