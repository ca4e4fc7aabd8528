/// Settings of a ``FaultServer``: its bounds and its random seed.
public struct FaultServerConfiguration: Sendable, Hashable {
    /// The port to listen on; `0` (the default) picks an ephemeral port.
    public var port: UInt16 = 0
    /// The server stops by itself after this long (real time), so a forgotten server never outlives a test run.
    public var lifetime: Duration = .seconds(120)
    /// The server stops after this many requests: it answers the last one, then closes its listener and every
    /// connection.
    public var maximumRequests: Int = 100_000
    /// Whether the server starts over, instead of stopping, when it reaches ``lifetime`` or ``maximumRequests``:
    /// it forgets the requests it recorded and the effects it applied, replays every script from its first fault,
    /// reseeds its generator and counts its lifetime and requests anew, on the same listener and connections, so
    /// that no request goes unanswered. Its totals (``FaultServer/requestCount``,
    /// ``FaultServer/requestCount(for:)``) keep counting. For a server that runs as long as a demo does, in
    /// bounded memory, until ``FaultServer/stop()``.
    public var startsOverAtBounds = false
    /// The largest request head plus body it reads; larger requests get `413` and a close.
    public var maximumRequestSize: Int = 16 * 1024 * 1024
    /// The status for paths nobody scripted.
    public var unscriptedStatus: Int = 404
    /// The seed of the generator behind random latency and chaos.
    public var seed: UInt64 = 0x5EED

    /// The defaults.
    public init() {}

    /// The defaults: ephemeral port, 120 s lifetime, 100,000 requests.
    public static let standard = FaultServerConfiguration()
}
