import ResilienceCore

/// The working state of one pass of ``SyncEngine/performSync()``.
struct SyncPass {
    /// Why a pass stopped early.
    enum Stop: Hashable {
        case rateLimited(until: ResilienceInstant)
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

/// What the server's answer means for one mutation.
enum Verdict {
    case applied(HTTPResponse)
    case duplicate
    case rateLimited(FailureClassification)
    case failed(FailureClassification, String)
    case cancelled

    /// What the breaker learns from it.
    var breakerOutcome: BreakerOutcome {
        switch self {
        case .applied, .duplicate: .success
        case .rateLimited(let classification), .failed(let classification, _): .failure(classification)
        case .cancelled: .cancelled
        }
    }
}

/// A batch response the request builder could not split into per-item results.
struct MutationBatchError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
