import ResilienceCore

/// The working state of one pass of ``SyncEngine/performSync()``.
struct SyncPass {
    /// Why a pass stopped early.
    enum Stop: Hashable {
        case rateLimited(until: ResilienceInstant)
        /// A stage of the pipeline other than a rate limit (another breaker, a bulkhead, a budget) refused to
        /// send until the instant given.
        case heldBack(until: ResilienceInstant, reason: String)
        case offline
        case storage(String)
        case cancelled
    }

    var report = SyncReport()
    var blocked = Set<EntityKey>()
    var lastFailure: String?
    var stop: Stop?
}

/// An entity's identity: later mutations of an entity whose mutation failed wait for the next pass.
struct EntityKey: Hashable {
    var type: String
    var id: String

    init(_ mutation: Mutation) {
        type = mutation.entityType
        id = mutation.entityID
    }
}

/// What the server's answer (or the pipeline's refusal) means for one mutation.
enum Verdict {
    case applied(HTTPResponse)
    /// A 409 confirming the entity exists.
    case duplicate
    /// A 409 saying a request with this idempotency key is still in progress.
    case inProgress(FailureClassification)
    case rateLimited(FailureClassification)
    /// The pipeline refused to send (an open breaker, a local limit) until the instant given; `isRateLimit`
    /// when the refusal is a rate limit (see ``SyncState/rateLimited(until:pending:)``).
    case rejected(until: ResilienceInstant, isRateLimit: Bool, reason: String)
    case failed(FailureClassification, String)
    case cancelled

    var isRateLimited: Bool {
        if case .rateLimited = self { return true }
        return false
    }

    /// Whether the pipeline's breaker may have opened on this answer.
    var mayOpenBreaker: Bool {
        switch self {
        case .rateLimited, .failed, .inProgress: true
        case .applied, .duplicate, .rejected, .cancelled: false
        }
    }
}

/// A batch answered 2xx with a rate-limited item: thrown inside the pipeline so the breaker counts it as the
/// rate limit it is.
struct SyncRateLimitedItem: ClassifiedError {
    var classification: FailureClassification
}

/// A batch response the request builder could not split into per-item results.
struct MutationBatchError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
