import Foundation

/// Everything a ``FaultServer`` mutates, guarded by one lock.
struct FaultServerState {
    struct Route {
        var faults: [Fault.Kind]
        var next = 0

        mutating func take() -> Fault.Kind? {
            guard !faults.isEmpty else { return nil }
            defer { next += 1 }
            return faults[min(next, faults.count - 1)]
        }
    }

    struct StoredReply {
        var status: Int
        var body: Data
    }

    var routes: [String: Route] = [:]
    var requests: [RecordedRequest] = []
    var requestCount = 0
    /// The requests since the server started (or last started over), which its request limit bounds.
    var requestsSinceStart = 0
    /// When the server started (or last started over), from which its lifetime counts.
    var started = ContinuousClock.now
    var requestCountsByPath: [String: Int] = [:]
    var appliedEffects: [String: Int] = [:]
    var storedReplies: [String: StoredReply] = [:]
    var unkeyedEffects = 0
    var connections: Set<Int32> = []
    var isStopped = false
    /// The request limit is reached: no request is admitted any more, and the server stops once the last one is
    /// answered.
    var isFull = false
    var random: PseudoRandomGenerator
    var gzipCache: [Int: Data] = [:]

    init(seed: UInt64) { random = PseudoRandomGenerator(seed: seed) }

    /// Starts over as a new server with the same scripts would: nothing recorded or applied, every script at its
    /// first fault, the generator reseeded, the lifetime and the request limit counted from now. The totals stay.
    mutating func startOver(seed: UInt64) {
        for path in routes.keys { routes[path]?.next = 0 }
        requests = []
        requestsSinceStart = 0
        started = .now
        appliedEffects = [:]
        storedReplies = [:]
        unkeyedEffects = 0
        random = PseudoRandomGenerator(seed: seed)
    }

    /// Replaces random choices (chaos, random latency) by concrete faults, using the seeded generator.
    mutating func resolve(_ kind: Fault.Kind) -> Fault.Kind {
        switch kind {
        case .chaos(let profile):
            return resolve(profile.pick(Double.random(in: 0..<1, using: &random)))
        case .randomlyDelayed(let minimum, let maximum, let next):
            let low = Double(minimum.components.seconds) + Double(minimum.components.attoseconds) / 1e18
            let high = Double(maximum.components.seconds) + Double(maximum.components.attoseconds) / 1e18
            let seconds = high > low ? Double.random(in: low...high, using: &random) : low
            return .delayed(.seconds(seconds), resolve(next))
        case .delayed(let delay, let next):
            return .delayed(delay, resolve(next))
        case .slowClose(let delay, let next):
            return .slowClose(delay, resolve(next))
        case .requireHeader(let name, let values, let then, let otherwise):
            return .requireHeader(name: name, values: values, then: resolve(then), otherwise: resolve(otherwise))
        default:
            return kind
        }
    }
}
