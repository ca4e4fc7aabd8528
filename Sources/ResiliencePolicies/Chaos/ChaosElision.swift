// A switched-off chaos outcome stage costs a pipeline nothing but its switch's load.
//
// A `ChaosOutcomeStrategy` produces the call's output, so it is not a stepped stage: inside a `Pipeline` it
// splits the built-in stages into two chains of steps, with its own `execute(_:next:)` between them, and that
// costs a call about half as much as the five standard stages together, even with its switch off. A pipeline
// whose stages are all built-in therefore keeps a second form of itself, built with the pipeline: the same
// stages without their outcome stages, one chain of steps. A call takes that form when every outcome stage
// would pass it through anyway: its switch's flag is off (a closure switch is always asked, by the stage), or
// the call's output is not the stage's `Value`. Neither form draws from a random source or emits anything the
// other would not, so the choice changes nothing a caller can see. A switch flipped on takes effect from the
// next call.

/// A stage that has a form without its chaos outcome stages (see the top of this file): every built-in stage
/// (itself), the compositions of such stages, and ``ChaosOutcomeStrategy`` (nothing). A third-party stage
/// does not conform, and a pipeline with one keeps its outcome stages in every call.
@usableFromInline
protocol ChaosOutcomeEliding: ResilienceStrategy {
    /// The stage's form without its chaos outcome stages.
    associatedtype WithoutOutcomes: ResilienceStrategy = Self
    /// The stage without its chaos outcome stages.
    var withoutOutcomes: WithoutOutcomes { get }
    /// Appends the gate of each of its chaos outcome stages, outermost first.
    func collectOutcomeGates(into gates: inout [ChaosOutcomeGate])
}

extension ChaosOutcomeEliding where WithoutOutcomes == Self {
    @inlinable var withoutOutcomes: Self { self }
    @inlinable func collectOutcomeGates(into gates: inout [ChaosOutcomeGate]) {}
}

/// When one chaos outcome stage passes a call through: its switch, and the output type it injects into.
@usableFromInline
struct ChaosOutcomeGate: Sendable {
    /// The stage's switch.
    @usableFromInline let enabled: ChaosSwitch
    /// The output type the stage injects into (its `Value`).
    @usableFromInline let valueType: any Sendable.Type

    init(enabled: ChaosSwitch, valueType: any Sendable.Type) {
        self.enabled = enabled
        self.valueType = valueType
    }

    /// Whether the stage passes a call of output `output` through without a draw: the output is not its
    /// `Value`, or its switch's flag is off (the checks of ``ChaosOutcomeStrategy/execute(_:next:)``, in its
    /// order). A closure switch's flag is on, so its closure is asked once per call, by the stage.
    @inlinable @inline(__always)
    func passes(_ output: any Sendable.Type) -> Bool {
        output != valueType || enabled.isFlagOff
    }
}

/// A pipeline's form without its chaos outcome stages, and when a call may take it.
@usableFromInline
final class ChaosOutcomeElision: Sendable {
    /// The box of the stages without their outcome stages.
    @usableFromInline let box: AnyStrategyBox
    /// The outermost outcome stage's gate.
    @usableFromInline let first: ChaosOutcomeGate
    /// The other outcome stages' gates (mostly none).
    @usableFromInline let others: [ChaosOutcomeGate]

    @usableFromInline
    init(box: AnyStrategyBox, first: ChaosOutcomeGate, others: [ChaosOutcomeGate]) {
        self.box = box
        self.first = first
        self.others = others
    }

    /// The form for `root`, or `nil` when it has no outcome stage or a stage without such a form.
    @inlinable
    static func make<Root: ResilienceStrategy>(for root: Root) -> ChaosOutcomeElision? {
        guard let eliding = root as? any ChaosOutcomeEliding else { return nil }
        return make(eliding: eliding)
    }

    /// The form for `root`, or `nil` when it has no outcome stage.
    @inlinable
    static func make<Root: ChaosOutcomeEliding>(eliding root: Root) -> ChaosOutcomeElision? {
        var gates: [ChaosOutcomeGate] = []
        root.collectOutcomeGates(into: &gates)
        guard let first = gates.first else { return nil }
        return ChaosOutcomeElision(
            box: StageDriver.box(for: root.withoutOutcomes), first: first, others: Array(gates.dropFirst()))
    }

    /// Whether every outcome stage passes a call of output `output` through.
    @inlinable @inline(__always)
    func passes(_ output: any Sendable.Type) -> Bool {
        guard first.passes(output) else { return false }
        return others.isEmpty || others.allSatisfy { $0.passes(output) }
    }
}

extension ChaosOutcomeStrategy: ChaosOutcomeEliding {
    /// Nothing: the stage passes every call through while its switch is off.
    @inlinable var withoutOutcomes: EmptyStrategy { EmptyStrategy() }

    @usableFromInline
    func collectOutcomeGates(into gates: inout [ChaosOutcomeGate]) {
        gates.append(ChaosOutcomeGate(enabled: injection.enabled, valueType: Value.self))
    }
}

extension ComposedStrategy: ChaosOutcomeEliding where Outer: ChaosOutcomeEliding, Inner: ChaosOutcomeEliding {
    @inlinable
    var withoutOutcomes: ComposedStrategy<Outer.WithoutOutcomes, Inner.WithoutOutcomes> {
        ComposedStrategy<Outer.WithoutOutcomes, Inner.WithoutOutcomes>(
            outer: outer.withoutOutcomes, inner: inner.withoutOutcomes)
    }

    @usableFromInline
    func collectOutcomeGates(into gates: inout [ChaosOutcomeGate]) {
        outer.collectOutcomeGates(into: &gates)
        inner.collectOutcomeGates(into: &gates)
    }
}

extension EitherStrategy: ChaosOutcomeEliding where First: ChaosOutcomeEliding, Second: ChaosOutcomeEliding {
    @inlinable
    var withoutOutcomes: EitherStrategy<First.WithoutOutcomes, Second.WithoutOutcomes> {
        switch self {
        case .first(let stage): .first(stage.withoutOutcomes)
        case .second(let stage): .second(stage.withoutOutcomes)
        }
    }

    @usableFromInline
    func collectOutcomeGates(into gates: inout [ChaosOutcomeGate]) {
        switch self {
        case .first(let stage): stage.collectOutcomeGates(into: &gates)
        case .second(let stage): stage.collectOutcomeGates(into: &gates)
        }
    }
}

// Every other built-in stage is its own form: a pipeline of them and outcome stages has a form without the
// latter. A new built-in stage joins this list.
extension EmptyStrategy: ChaosOutcomeEliding {}
extension DeadlineStrategy: ChaosOutcomeEliding {}
extension RetryStrategy: ChaosOutcomeEliding {}
extension CircuitBreakerStrategy: ChaosOutcomeEliding {}
extension RateLimiterStrategy: ChaosOutcomeEliding {}
extension AdaptiveConcurrencyStage: ChaosOutcomeEliding {}
extension ServerQuotaStrategy: ChaosOutcomeEliding {}
extension ChaosFaultStrategy: ChaosOutcomeEliding {}
extension ChaosLatencyStrategy: ChaosOutcomeEliding {}
extension ChaosBehaviourStrategy: ChaosOutcomeEliding {}
extension FallbackStrategy: ChaosOutcomeEliding {}
extension HedgingStrategy: ChaosOutcomeEliding {}
extension CoalescingStrategy: ChaosOutcomeEliding {}
extension WaitForConnectivityStrategy: ChaosOutcomeEliding {}
