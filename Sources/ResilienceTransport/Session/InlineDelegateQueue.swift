import Foundation

/// The session's delegate queue: runs every delegate callback at once, on the thread that delivers it.
///
/// FoundationNetworking (Linux) hands each received chunk to the delegate queue with `addOperation` and
/// keeps reading the socket (and inflating) while the chunks wait in the queue: with an ordinary queue the
/// backlog grows with the body, far past the size cap, before the delegate sees the first byte over it.
/// Run inline, the delegate sees each chunk before libcurl reads the next, so the cap bounds memory. The
/// delegate is thread-safe (its state is behind a lock) and never blocks.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
}
