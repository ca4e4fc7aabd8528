import Dispatch
import ResilienceCore
import Testing

@Suite("ConnectivityBroadcaster: the logic every connectivity monitor shares")
struct ConnectivityBroadcasterTests {
    @Test("A listener gets the current path first, then each change in order; repeats are not changes")
    func currentThenChanges() async {
        let broadcaster = ConnectivityBroadcaster(initial: .satisfied)
        var paths = broadcaster.paths().makeAsyncIterator()
        #expect(await paths.next() == .satisfied)
        broadcaster.update(.satisfied)
        broadcaster.update(.unsatisfied)
        #expect(await paths.next() == .unsatisfied)
        broadcaster.update(.unsatisfied)
        let expensive = NetworkPath(status: .satisfied, isExpensive: true, interfaces: ["wwan0"])
        broadcaster.update(expensive)
        #expect(await paths.next() == expensive)
        #expect(broadcaster.currentPath == expensive)
    }

    @Test("Every listener sees every change; a slow listener keeps only the newest path")
    func fanOut() async {
        let broadcaster = ConnectivityBroadcaster(initial: .unsatisfied)
        var first = broadcaster.paths().makeAsyncIterator()
        var second = broadcaster.paths().makeAsyncIterator()
        #expect(broadcaster.listenerCount == 2)
        #expect(await first.next() == .unsatisfied)
        broadcaster.update(.satisfied)
        #expect(await first.next() == .satisfied)
        broadcaster.update(.unsatisfied)
        broadcaster.update(NetworkPath(status: .requiresConnection))
        // The second listener did not read in between: it gets the newest path, not a stale backlog.
        #expect(await second.next() == NetworkPath(status: .requiresConnection))
        #expect(await first.next() == NetworkPath(status: .requiresConnection))
    }

    @Test("A listener that stops iterating is forgotten; finish ends every sequence and later ones at once")
    func lifecycle() async {
        let broadcaster = ConnectivityBroadcaster(initial: .satisfied)
        let task = Task {
            var count = 0
            for await _ in broadcaster.paths() { count += 1 }
            return count
        }
        while broadcaster.listenerCount == 0 { await Task.yield() }
        task.cancel()
        _ = await task.value
        while broadcaster.listenerCount != 0 { await Task.yield() }
        var open = broadcaster.paths().makeAsyncIterator()
        _ = await open.next()
        broadcaster.finish()
        #expect(await open.next() == nil)
        var late = broadcaster.paths().makeAsyncIterator()
        #expect(await late.next() == nil)
        broadcaster.update(.unsatisfied)
        #expect(broadcaster.currentPath == .satisfied)
    }

    @Test("waitForPath returns at once when the path suits, wakes on the change, and a stopped monitor throws")
    func waiting() async throws {
        let monitor = BroadcastingMonitor(.unsatisfied)
        let waiter = Task { try await monitor.waitForPath() }
        while monitor.broadcaster.listenerCount == 0 { await Task.yield() }
        monitor.broadcaster.update(.satisfied)
        #expect(try await waiter.value == .satisfied)
        #expect(try await monitor.waitForPath() == .satisfied)
        monitor.broadcaster.update(NetworkPath(status: .satisfied, isConstrained: true))
        let constrained = Task { try await monitor.waitForPath { $0.isSatisfied && !$0.isConstrained } }
        while monitor.broadcaster.listenerCount == 0 { await Task.yield() }
        monitor.broadcaster.finish()
        await #expect(throws: ConnectivityMonitorError.stopped) { try await constrained.value }
    }

    @Test("A cancelled wait throws CancellationError and stops listening")
    func cancelledWait() async {
        let monitor = BroadcastingMonitor(.unsatisfied)
        let waiter = Task { try await monitor.waitForPath() }
        while monitor.broadcaster.listenerCount == 0 { await Task.yield() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        while monitor.broadcaster.listenerCount != 0 { await Task.yield() }
    }

    @Test(
        "Reports from several threads at once: every listener's newest path is the current one",
        .timeLimit(.minutes(1)))
    func concurrentReports() async {
        // An update that became current first but yielded last left listeners on a path that is no longer
        // current (online while offline: a held call sent into the lost network), until the next change.
        for trial in 0..<1000 {
            let broadcaster = ConnectivityBroadcaster(initial: .unsatisfied)
            var listeners = (0..<32).map { _ in broadcaster.paths().makeAsyncIterator() }
            for index in listeners.indices { _ = await listeners[index].next() }
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for step in 0..<10 { broadcaster.update((step + worker) % 2 == 0 ? .satisfied : .unsatisfied) }
            }
            let current = broadcaster.currentPath
            var stale = 0
            for index in listeners.indices where await listeners[index].next() != current { stale += 1 }
            #expect(stale == 0, "trial \(trial): \(stale) listeners not on the current path \(current)")
            if stale > 0 { return }
        }
    }
}

/// The smallest monitor: a broadcaster and nothing else.
private final class BroadcastingMonitor: ConnectivityMonitor {
    let broadcaster: ConnectivityBroadcaster
    init(_ initial: NetworkPath) { broadcaster = ConnectivityBroadcaster(initial: initial) }
    var currentPath: NetworkPath { broadcaster.currentPath }
    func paths() -> AsyncStream<NetworkPath> { broadcaster.paths() }
}
