import Foundation
import ResiliencePolicies
import ResilienceSync
import ResilienceTesting

/// A scripted server for engine tests: answers each request with the next step of the script (then with
/// `fallback`), records every request, and applies each idempotency key at most once like a real sink.
final class ScriptedSyncTransport: HTTPTransport {
    enum Step: Sendable {
        case status(Int)
        /// A response with a JSON body (a 409's RFC 9457 problem, say).
        case json(Int, String)
        case fail(any Error & Sendable)
        /// Cancels the task that sends (the engine's), then throws `CancellationError` as a transport would.
        case cancelTask
        /// Waits at `gate` until the test opens it, then answers `status`.
        case held(CallGate, status: Int)
        /// A 200 batch response whose per-item statuses are `statuses` (parsed by ``EventsRequestBuilder``).
        case batch([Int])
    }

    private struct State {
        var script: [Step]
        var requests: [HTTPRequest] = []
        var applied: [String: Int] = [:]
        var deliveries: [String: Int] = [:]
    }

    private let state: LockedState<State>
    let fallback: Step

    init(_ script: [Step] = [], fallback: Step = .status(200)) {
        state = LockedState(initialState: State(script: script))
        self.fallback = fallback
    }

    func append(_ steps: [Step]) { state.withLock { $0.script += steps } }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    /// Effects applied per idempotency key (at most one: replays are recognised, like a real sink).
    var applied: [String: Int] { state.withLock { $0.applied } }
    /// Successful deliveries per idempotency key, replays included.
    var deliveries: [String: Int] { state.withLock { $0.deliveries } }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let step = state.withLock { state -> Step in
            state.requests.append(request)
            return state.script.isEmpty ? fallback : state.script.removeFirst()
        }
        switch step {
        case .fail(let error):
            throw error
        case .cancelTask:
            withUnsafeCurrentTask { $0?.cancel() }
            throw CancellationError()
        case .held(let gate, let status):
            try await gate.pass()
            return HTTPResponse(status: status)
        case .status(let status):
            if (200..<300).contains(status), let key = request.headers["Idempotency-Key"] {
                state.withLock { state in
                    state.deliveries[key, default: 0] += 1
                    if state.applied[key] == nil { state.applied[key] = 1 }
                }
            }
            return HTTPResponse(status: status, headers: status == 429 ? ["Retry-After": "30"] : [:])
        case .json(let status, let body):
            return HTTPResponse(
                status: status, headers: ["Content-Type": "application/problem+json"], body: Data(body.utf8))
        case .batch(let statuses):
            return HTTPResponse(status: 200, body: Data(statuses.map(String.init).joined(separator: ",").utf8))
        }
    }
}

/// Builds `POST /events` (create), `PUT /events/{id}` (update), `DELETE /events/{id}` and, when batching is on,
/// `POST /events/batch` whose response body is a comma-separated list of per-item statuses.
struct EventsRequestBuilder: SyncRequestBuilder {
    var supportsBatches = false
    var failingEntity: String?

    func request(for mutation: Mutation) throws -> HTTPRequest {
        if mutation.entityID == failingEntity { throw RequestBuildError() }
        let base = URL(string: "https://api.example.com/events")!
        switch mutation.operation {
        case .create: return HTTPRequest(method: .post, url: base, body: mutation.payload)
        case .delete: return HTTPRequest(method: .delete, url: base.appendingPathComponent(mutation.entityID))
        default:
            return HTTPRequest(
                method: .put, url: base.appendingPathComponent(mutation.entityID), body: mutation.payload)
        }
    }

    func batchRequest(for mutations: [Mutation]) throws -> HTTPRequest? {
        guard supportsBatches else { return nil }
        let keys = mutations.map(\.idempotencyKey).joined(separator: "\n")
        return HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/events/batch")!, body: Data(keys.utf8))
    }

    func batchResults(from response: HTTPResponse, for mutations: [Mutation]) throws -> [HTTPResponse] {
        let text = String(decoding: response.body, as: UTF8.self)
        // This test API's batch items answer 409 only for entities that already exist, and say so.
        return text.split(separator: ",").compactMap { Int($0) }.map { status in
            HTTPResponse(status: status, body: status == 409 ? Data(ConflictBodies.exists.utf8) : Data())
        }
    }
}

struct RequestBuildError: Error {}

/// 409 bodies in the shapes real APIs use.
enum ConflictBodies {
    /// An RFC 9457 problem confirming the entity exists.
    static let exists = #"{"type":"https://api.example.com/problems/already-exists","title":"Event exists"}"#
    /// The Idempotency-Key draft's "still in progress" answer, as a problem.
    static let inProgress =
        #"{"type":"https://api.example.com/problems/idempotency-key-in-use","title":"A request with this key is in progress"}"#
    /// A 409 that says neither.
    static let ambiguous = #"{"title":"Conflict"}"#
}

/// Errors a transport would throw, classified the way ResilienceTransport classifies them.
struct TestNetworkError: ClassifiedError, Hashable {
    var category: FailureCategory
    var classification: FailureClassification {
        FailureClassification(
            category: category, code: category == .timeout ? .timedOut : .connectionReset,
            message: "test \(category)", requestWasNotSent: category == .networkUnreachable)
    }

    static let reset = TestNetworkError(category: .transient)
    static let timeout = TestNetworkError(category: .timeout)
    static let unreachable = TestNetworkError(category: .networkUnreachable)
}

/// Records the delegate's calls.
final class RecordingSyncDelegate: SyncEngineDelegate {
    let failedEntities = LockedBox<[String]>([])
    let deletedDuplicates = LockedBox<[String]>([])
    let applied = LockedBox<[String]>([])
    /// When set, marking an entity failed waits at this gate first (a slow local database).
    let markGate = LockedBox<CallGate?>(nil)

    func markEntityFailed(_ mutation: Mutation, reason: String) async {
        if let gate = markGate.value { try? await gate.pass() }
        failedEntities.mutate { $0.append(mutation.entityID) }
    }

    func deleteLocalDuplicate(_ mutation: Mutation) async {
        deletedDuplicates.mutate { $0.append(mutation.entityID) }
    }

    func mutationApplied(_ mutation: Mutation, response: HTTPResponse) async {
        applied.mutate { $0.append(mutation.entityID) }
    }
}

/// What the engine needs of the breaker it is handed: status, manual reset and persistence.
typealias SyncBreaker = ResettableBreaker & PersistableBreaker & MeasurableBreaker

/// Everything an engine test needs, wired together.
struct SyncHarness {
    let clock = ManualClock()
    let store: InMemoryMutationStore
    let transport: ScriptedSyncTransport
    let breaker: any SyncBreaker
    let delegate = RecordingSyncDelegate()
    let telemetry = RecordingTelemetrySink()
    let engine: SyncEngine

    init(
        _ script: [ScriptedSyncTransport.Step] = [], fallback: ScriptedSyncTransport.Step = .status(200),
        builder: EventsRequestBuilder = EventsRequestBuilder(), maxRetries: Int = 3,
        conflicts: ConflictRules = ConflictRules(),
        store: InMemoryMutationStore = InMemoryMutationStore(),
        breaker: any SyncBreaker = SeedRateLimitBreakerDouble(),
        failureBreaker: (any BreakerPolicy)? = nil,
        pollInterval: Duration = .seconds(30), pageSize: Int = 100,
        currentDate: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_000) }
    ) {
        self.store = store
        self.breaker = breaker
        transport = ScriptedSyncTransport(script, fallback: fallback)
        var configuration = SyncEngine.Configuration()
        configuration.maxRetries = maxRetries
        configuration.currentDate = currentDate
        configuration.conflicts = conflicts
        configuration.pollInterval = pollInterval
        configuration.pageSize = pageSize
        engine = SyncEngine(
            store: store, transport: transport, requestBuilder: builder,
            pipeline: syncPipeline(breaker, failureBreaker: failureBreaker),
            breaker: breaker, delegate: delegate, configuration: configuration, clock: .manual(clock),
            telemetry: telemetry)
    }

    /// The multiplier the breaker's next trip will use.
    var multiplier: Double? { breaker.exportState(now: .origin).values["multiplier"] }

    @discardableResult
    func enqueue(_ entities: [String], _ operation: MutationOperation = .create) throws -> [Mutation] {
        try entities.map {
            try store.enqueue(
                MutationDraft(
                    entityType: "event", entityID: $0, operation: operation, idempotencyKey: "key-\($0)-\(operation)"))
        }
    }
}

/// The breakers the engine is tested with: the seed-004 test double and ResiliencePolicies' real one.
enum BreakerKind: String, CaseIterable, Sendable {
    case seedDouble = "seed-004 double"
    case rateLimitBreaker = "RateLimitBreaker"

    func make() -> any SyncBreaker {
        switch self {
        case .seedDouble: SeedRateLimitBreakerDouble()
        case .rateLimitBreaker: RateLimitBreaker()
        }
    }
}

/// The pipeline an app gives the engine: the rate-limit breaker, and optionally a breaker that spaces out
/// passes after network and server errors.
func syncPipeline(_ breaker: any BreakerPolicy, failureBreaker: (any BreakerPolicy)? = nil) -> any ResiliencePipeline {
    Pipeline {
        CircuitBreakerStrategy(breaker: breaker)
        if let failureBreaker { CircuitBreakerStrategy(breaker: failureBreaker) }
    }
}

/// A breaker that opens on the first network or server error for 10 s, doubling on each trip in a row up to
/// 80 s, and closes on one successful probe: the growing spacing of failed passes, as a pipeline policy.
func failureSpacingBreaker() -> ConsecutiveFailureBreaker {
    var configuration = ConsecutiveFailureBreaker.Configuration()
    configuration.failureThreshold = 1
    configuration.successesToClose = 1
    configuration.openDuration = BreakerBackoff(
        base: .seconds(10), growthFactor: 2, maximumMultiplier: 8, maximum: .seconds(80))
    configuration.countsAsFailure = .categories([.transient, .timeout, .serverError, .networkUnreachable])
    return ConsecutiveFailureBreaker(configuration)
}

/// A store that forwards every call to an in-memory one; subclasses override the calls they break.
class ForwardingMutationStore: MutationStore, @unchecked Sendable {
    let inner = InMemoryMutationStore()

    func enqueue(batch drafts: [MutationDraft]) throws -> [Mutation] { try inner.enqueue(batch: drafts) }
    func pending(after id: Int64, limit: Int) throws -> [Mutation] { try inner.pending(after: id, limit: limit) }
    func pendingCount() throws -> Int { try inner.pendingCount() }
    func record(_ outcome: MutationOutcome, for id: Int64) throws { try inner.record(outcome, for: id) }
    func failed(after id: Int64, limit: Int) throws -> [Mutation] { try inner.failed(after: id, limit: limit) }
    func requeueFailed(_ id: Int64) throws { try inner.requeueFailed(id) }
    func discardFailed(_ id: Int64) throws { try inner.discardFailed(id) }
    func removeAllPending() throws -> Int { try inner.removeAllPending() }
    func metadata(forKey key: String) throws -> Data? { try inner.metadata(forKey: key) }
    func setMetadata(_ value: Data?, forKey key: String) throws { try inner.setMetadata(value, forKey: key) }
}
