import Foundation
import PostgresNIO
import ResiliencePostgreSQL
import ResilienceTesting
import Testing

/// A statement the server does not answer (waiting for a lock another session holds, as behind a migration's
/// `LOCK TABLE`) must not hold a call past its deadline.
@Suite("PostgreSQL store when the server stops answering", .serialized, .timeLimit(.minutes(2)))
struct PostgresOutageTests {
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aStatementWaitingForALockEndsAtTheCallTimeoutOrWhenCancelled() async throws {
        let prefix = freshPrefix("locked")
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.callTimeout = .seconds(1)
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1))
        let request = TokenLeaseRequest(key: "locked", count: 1, quota: quota)
        let clock = ContinuousClock()
        try await TestDatabase.withStore(configuration) { store in
            try await store.migrate()
            try await TestDatabase.withClient { client in
                try await client.withConnection { connection in
                    _ = try await connection.query("BEGIN", logger: connection.logger)
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "LOCK TABLE \(prefix)_rate IN ACCESS EXCLUSIVE MODE"),
                        logger: connection.logger)
                    // The lock is held for 6 s; each call must end long before.
                    let releaser = Task {
                        try? await Task.sleep(for: .seconds(6))
                        _ = try? await connection.query("COMMIT", logger: connection.logger)
                    }
                    defer { releaser.cancel() }

                    let started = clock.now
                    let timedOut = await Self.lease(request, from: store)
                    let took = started.duration(to: clock.now)
                    #expect(timedOut == .failure(.timedOut(.seconds(1))), "got \(timedOut)")
                    #expect(took < .seconds(3), "the call ended after \(took), not at its 1 s callTimeout")

                    // A caller that stops waiting (a shared policy at its 250 ms storeDeadline) ends the call too.
                    let cancelledAt = clock.now
                    let call = Task { await Self.lease(request, from: store) }
                    try await Task.sleep(for: .milliseconds(250))
                    call.cancel()
                    let cancelled = await call.value
                    let cancelledTook = cancelledAt.duration(to: clock.now)
                    #expect((try? cancelled.get()) == nil, "got \(cancelled)")
                    #expect(cancelledTook < .seconds(1), "the cancelled call ended after \(cancelledTook)")
                    await releaser.value
                }
            }
            // With the lock released, the store answers again on fresh connections.
            #expect(try await store.leaseTokens(request).granted == 1)
        }
    }

    /// What a lease call answered (how many slots it granted), as a value.
    static func lease(
        _ request: TokenLeaseRequest, from store: PostgresCoordinationStore
    ) async -> Result<Int, CoordinationStoreError> {
        do throws(CoordinationStoreError) {
            return .success(try await store.leaseTokens(request).granted)
        } catch {
            return .failure(error)
        }
    }
}
