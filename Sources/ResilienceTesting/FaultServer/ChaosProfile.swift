import Foundation

/// Per-request probabilities of each fault for ``Fault/chaos(_:)``; whatever is left answers normally.
///
/// Probabilities are in `0...1` and should sum to at most 1. Draws come from the server's seeded generator,
/// so a run with the same seed and the same request order sees the same faults.
public struct ChaosProfile: Sendable, Hashable {
    /// Probability of a TCP reset.
    public var reset: Double = 0
    /// Probability of a `503 Service Unavailable`.
    public var serviceUnavailable: Double = 0
    /// Probability of a `429` with `Retry-After: 1`.
    public var rateLimited: Double = 0
    /// Probability of a stall (accept, read, never answer).
    public var stall: Double = 0
    /// Probability of a truncated body.
    public var truncated: Double = 0
    /// Probability of an empty reply.
    public var emptyReply: Double = 0
    /// Probability of non-HTTP garbage.
    public var garbage: Double = 0
    /// Probability of added latency before a normal answer.
    public var latency: Double = 0
    /// The latency added when `latency` fires.
    public var addedLatency: Duration = .milliseconds(200)
    /// The normal answer's status.
    public var successStatus: Int = 200
    /// The normal answer's body.
    public var successBody: String = #"{"ok":true}"#

    /// A profile with no faults.
    public init() {}

    /// Transient faults only (reset, 503, stall) with `probability` in total, split evenly.
    public static func transient(probability: Double) -> ChaosProfile {
        var profile = ChaosProfile()
        profile.reset = probability / 3
        profile.serviceUnavailable = probability / 3
        profile.stall = probability / 3
        return profile
    }

    /// A bit of everything, for demos: 5 % each of reset, 503, 429, stall, truncated, empty, garbage, latency.
    public static let demo: ChaosProfile = {
        var profile = ChaosProfile()
        profile.reset = 0.05
        profile.serviceUnavailable = 0.05
        profile.rateLimited = 0.05
        profile.stall = 0.05
        profile.truncated = 0.05
        profile.emptyReply = 0.05
        profile.garbage = 0.05
        profile.latency = 0.05
        return profile
    }()

    func pick(_ draw: Double) -> Fault.Kind {
        let ok = Fault.Kind.respond(
            status: successStatus, headers: ["Content-Type": "application/json"], body: Data(successBody.utf8))
        let table: [(Double, Fault.Kind)] = [
            (reset, .reset),
            (serviceUnavailable, .respond(status: 503, headers: [:], body: Data("unavailable".utf8))),
            (rateLimited, .respond(status: 429, headers: ["Retry-After": "1"], body: Data("slow down".utf8))),
            (stall, .hang),
            (truncated, .truncated(status: 200, body: Data("{\"ok\":".utf8), declaredLength: 64)),
            (emptyReply, .emptyReply),
            (garbage, .garbage(Data("\u{0}\u{7f}NOT HTTP\r\n\r\n".utf8))),
            (latency, .delayed(addedLatency, ok)),
        ]
        var cumulative = 0.0
        for (probability, kind) in table {
            cumulative += max(0, probability)
            if draw < cumulative { return kind }
        }
        return ok
    }
}
