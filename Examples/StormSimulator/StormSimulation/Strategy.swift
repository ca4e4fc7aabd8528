import ResilienceKit
import ResilienceTesting

/// Who sends the traffic: a few busy clients (servers calling a dependency) or many quiet ones (apps).
public enum TrafficProfile: String, Sendable, Hashable {
    /// Clients of 4 requests per second each (well within the presets' token bucket of 10/s): `.standard` and
    /// `.background` are meant for this.
    case serverFacing = "server-facing"
    /// Clients of one request every 2 s each: `.interactive` is meant for this.
    case appFacing = "app-facing"

    /// Requests per second one client offers, unless the run sets its own (`--rate-per-client`).
    public var ratePerClient: Double { self == .serverFacing ? 4 : 0.5 }
}

/// One row of the report: how a client builds its pipeline, built only with ResilienceKit's public API.
public struct Strategy: Sendable {
    /// What the row stands for.
    public enum Role: String, Sendable, Hashable {
        /// A reference point (no retry).
        case baseline
        /// A preset exactly as shipped, built by the call a user makes.
        case shipped
        /// A variant of a shipped preset, labelled as such and never the headline.
        case tuned
        /// A published experiment reproduced in its own model.
        case calibration
    }

    /// The row's label.
    public let name: String
    /// What the row stands for.
    public let role: Role
    /// The row's colour in every chart.
    public let color: String
    /// Who sends the traffic.
    public let profile: TrafficProfile
    /// Whether the row is a baseline of app-facing traffic: drawn dashed beside the server-facing one.
    var isAppFacingBaseline: Bool { role == .baseline && profile == .appFacing }
    /// Builds one client's pipeline on the simulation's clock with the client's random stream.
    public let makePipeline: @Sendable (ResilienceClock, SharedRandomSource) -> any ResiliencePipeline
    /// Builds the pipelines of one client's keys (the endpoints of one host it calls), given how many; `nil`:
    /// every key of the client runs through the one pipeline ``makePipeline`` builds.
    let makeKeyPipelines: (@Sendable (ResilienceClock, SharedRandomSource, Int) -> [any ResiliencePipeline])?

    /// Creates a row whose client sends every key's requests through one pipeline.
    public init(
        _ name: String, role: Role, color: String, profile: TrafficProfile = .serverFacing,
        makePipeline: @escaping @Sendable (ResilienceClock, SharedRandomSource) -> any ResiliencePipeline
    ) {
        self.name = name
        self.role = role
        self.color = color
        self.profile = profile
        self.makePipeline = makePipeline
        makeKeyPipelines = nil
    }

    /// Creates a row whose client builds one pipeline per key of its host, all sharing one ``PresetScope``
    /// (one retry budget and one breaker per client and host), as an app built with ResilienceKit does.
    ///
    /// - Parameters:
    ///   - name: The row's label.
    ///   - role: What the row stands for.
    ///   - color: The row's colour in every chart.
    ///   - profile: Who sends the traffic.
    ///   - preset: The preset every key's pipeline and the host's scope are built from.
    public init(
        _ name: String, role: Role, color: String, profile: TrafficProfile = .serverFacing, preset: PipelinePreset
    ) {
        self.name = name
        self.role = role
        self.color = color
        self.profile = profile
        makePipeline = { clock, random in Pipeline.preset(preset, clock: clock, random: random) }
        makeKeyPipelines = { clock, random, keys in
            let host = PresetScope("api.example", preset: preset, clock: clock, random: random)
            return (0..<max(keys, 1)).map { _ in Pipeline.preset(preset, clock: clock, random: random, scope: host) }
        }
    }

    /// The pipelines of one client's `keys` keys: one per key sharing the host's scope (preset rows), or the
    /// client's one pipeline for every key.
    func pipelines(clock: ResilienceClock, random: SharedRandomSource, keys: Int) -> [any ResiliencePipeline] {
        if let makeKeyPipelines { return makeKeyPipelines(clock, random, keys) }
        let pipeline = makePipeline(clock, random)
        return Array(repeating: pipeline, count: max(keys, 1))
    }
}

/// Runs an operation through an outer pipeline whose every attempt runs through an inner one: how an app
/// hedges a whole call made through a preset.
struct NestedPipeline: ResiliencePipeline {
    let outer: any ResiliencePipeline
    let inner: any ResiliencePipeline

    func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await withoutActuallyEscaping(operation) { operation in
            let inner = inner
            let box = OperationBox(run: operation)
            return try await outer.execute(context) { context in try await inner.execute(context, box.run) }
        }
    }

    var stages: [StageDescription] { outer.stages + inner.stages }
}

/// Carries a non-escaping operation into the outer pipeline's attempts, which end before it returns.
struct OperationBox<Output>: @unchecked Sendable {
    let run: (ResilienceContext) async throws -> Output
}
