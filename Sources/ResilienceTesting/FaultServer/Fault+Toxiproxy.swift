import Foundation

// Toxiproxy's toxics (latency, bandwidth, slow_close, timeout, reset_peer, slicer, limit_data) as faults of a
// FaultServer route. Toxiproxy sits between client and server and alters the byte stream; here the server
// itself misbehaves the same way, on the response side (Docs/Testing.md lists each mapping).
extension Fault {
    /// Toxiproxy's `latency`: waits `latency` (± `jitter`, seeded by the server) before behaving like `fault`.
    ///
    /// - Parameters:
    ///   - latency: The delay before the answer.
    ///   - jitter: The most the delay varies either way. Default: none.
    ///   - fault: What follows the delay. Default: `.ok()`.
    /// - Returns: The fault.
    public static func latency(_ latency: Duration, jitter: Duration = .zero, then fault: Fault = .ok()) -> Fault {
        guard jitter > .zero else { return .delayed(by: latency, then: fault) }
        let low = latency - jitter
        return .randomlyDelayed(between: low > .zero ? low : .zero, and: latency + jitter, then: fault)
    }

    /// Toxiproxy's `bandwidth`: sends `body` at about `bytesPerSecond` (a tenth of it every 100 ms).
    ///
    /// - Parameters:
    ///   - bytesPerSecond: The rate (at least 10).
    ///   - status: The status. Default: 200.
    ///   - body: The body.
    /// - Returns: The fault.
    public static func bandwidth(bytesPerSecond: Int, status: Int = 200, body: Data) -> Fault {
        .slowDrip(status: status, body: body, chunkSize: max(1, bytesPerSecond / 10), interval: .milliseconds(100))
    }

    /// Toxiproxy's `slow_close`: behaves like `fault`, then keeps the connection open for `delay` before
    /// closing it (a client that knows the body's length is not held up; one that reads to the close is).
    ///
    /// - Parameters:
    ///   - delay: How long the connection stays open after the answer.
    ///   - fault: The answer. Default: `.ok()`.
    /// - Returns: The fault.
    public static func slowClose(after delay: Duration, then fault: Fault = .ok()) -> Fault {
        Fault(.slowClose(delay, fault.kind))
    }

    /// Toxiproxy's `timeout`: lets no data through and closes the connection after `timeout` without an
    /// answer; with `nil`, never closes it (``hang``).
    ///
    /// - Parameter timeout: When the connection closes; `nil` for never.
    /// - Returns: The fault.
    public static func timeout(after timeout: Duration?) -> Fault {
        guard let timeout else { return .hang }
        return .delayed(by: timeout, then: .emptyReply)
    }

    /// Toxiproxy's `reset_peer`: after `delay`, closes the connection with a TCP reset (``reset``).
    ///
    /// - Parameter delay: How long before the reset. Default: none.
    /// - Returns: The fault.
    public static func resetPeer(after delay: Duration = .zero) -> Fault {
        delay > .zero ? .delayed(by: delay, then: .reset) : .reset
    }

    /// Toxiproxy's `slicer`: sends `body` in slices of `averageSize` bytes, `delay` apart.
    ///
    /// - Parameters:
    ///   - averageSize: The bytes in each slice (at least 1).
    ///   - delay: The pause between slices.
    ///   - status: The status. Default: 200.
    ///   - body: The body.
    /// - Returns: The fault.
    public static func slicer(averageSize: Int, delay: Duration, status: Int = 200, body: Data) -> Fault {
        .slowDrip(status: status, body: body, chunkSize: averageSize, interval: delay)
    }

    /// Toxiproxy's `limit_data`: closes the connection once `bytes` bytes of the body were sent (its
    /// Content-Length still announces the whole body); a body within the limit is sent whole.
    ///
    /// - Parameters:
    ///   - bytes: The body bytes sent before the close.
    ///   - status: The status. Default: 200.
    ///   - body: The body.
    /// - Returns: The fault.
    public static func limitData(bytes: Int, status: Int = 200, body: Data) -> Fault {
        guard bytes < body.count else { return .respond(status: status, body: body) }
        return .truncated(status: status, body: body.prefix(max(0, bytes)), declaredLength: body.count)
    }
}
