/// A built-in stage that holds one limiter permit for the call: ``RateLimiterStrategy`` and
/// ``AdaptiveConcurrencyStage``. Its `enter` takes the permit at once or stops with the limiter's decision; the
/// steps here release it exactly once: as accepted in `exit`, with how the call failed in `recover`, and in
/// `resume` after waiting for it (`StageDriver.swift`).
@usableFromInline
protocol PermitStage: SteppedStage {
    /// The slow path after `enter` found no permit: waits for one when the stage waits, or throws the
    /// rejection. Emits `rateLimited` either way.
    func waitForPermit(
        after decision: RateLimitDecision, _ context: ResilienceContext
    ) async throws
        -> RateLimitPermit

    /// Releases the permit of a call that returned; `admittedAt` is the instant it was granted at when nothing
    /// suspended since that instant was read (`nil` after a wait).
    func releaseAccepted(_ permit: RateLimitPermit, admittedAt: ResilienceInstant?, _ context: ResilienceContext)

    /// Releases the permit of a call that failed with `failure`.
    func releaseFailed(_ permit: RateLimitPermit, _ failure: inout StageFailure, _ context: ResilienceContext)
}

extension PermitStage {
    @inlinable var recordSize: Int { MemoryLayout<RateLimitPermit>.stride }

    /// Releases the permit as accepted.
    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: StageFrame, at offset: Int) {
        releaseAccepted(frame.load(RateLimitPermit.self, at: offset), admittedAt: frame.start, context)
    }

    /// Waits for a permit (or throws the rejection), then runs `next` once under it and releases it once.
    @inlinable
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard case .mustWait(let decision) = stop.reason else { throw stop.failure(key: context.key) }
        let permit = try await waitForPermit(after: decision, context)
        var succeeded = true
        // Releases after the output went straight into the caller's return slot.
        defer { if succeeded { releaseAccepted(permit, admittedAt: nil, context) } }
        do {
            return try await next(context)
        } catch {
            succeeded = false
            var failure = StageFailure(error)
            releaseFailed(permit, &failure, context)
            throw error
        }
    }

    /// Releases the permit with how the call failed, and passes the failure on.
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        releaseFailed(frame.load(RateLimitPermit.self, at: offset), &failure, context)
        throw failure.passOn()
    }
}
