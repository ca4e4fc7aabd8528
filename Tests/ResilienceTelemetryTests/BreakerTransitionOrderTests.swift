import ResilienceCore
import ResilienceTelemetry
import Testing

/// Transitions are emitted after the breaker's lock is released, so they can reach the recorder in another
/// order than the breaker made them; the recorder's state (``TelemetryRecorder/metrics()``) and its statistics
/// follow ``BreakerTransition/sequence``, not the order received.
@Suite("Breaker transitions received out of order")
struct BreakerTransitionOrderTests {
    /// One step of a breaker's life: when it happened, the change, and its sequence.
    struct Step: Sendable {
        var seconds: Int64
        var from: BreakerState
        var to: BreakerState
        var sequence: UInt64?
        var kind: ResilienceEventKind = .breakerTransition
    }

    /// One breaker: open at 10 s, half-open at 40 s, open again at 41 s, half-open at 71 s, closed at 72 s.
    static let life = [
        Step(seconds: 10, from: .closed, to: .open, sequence: 1),
        Step(seconds: 40, from: .open, to: .halfOpen, sequence: 2),
        Step(seconds: 41, from: .halfOpen, to: .open, sequence: 3),
        Step(seconds: 71, from: .open, to: .halfOpen, sequence: 4),
        Step(seconds: 72, from: .halfOpen, to: .closed, sequence: 5),
    ]

    /// After the first `n` steps of ``life``, at 100 s: the state, the opens and the time spent open.
    static let expected: [(state: BreakerState, opens: Int, timeOpen: Duration)] = [
        (.open, 1, .seconds(90)),
        (.halfOpen, 1, .seconds(30)),
        (.open, 2, .seconds(89)),
        (.halfOpen, 2, .seconds(60)),
        (.closed, 2, .seconds(60)),
    ]

    static func event(_ step: Step, key: String = "lever") -> ResilienceEvent {
        ResilienceEvent(
            kind: step.kind, key: key, time: ResilienceInstant(offset: .seconds(step.seconds)),
            transition: BreakerTransition(
                from: step.from, to: step.to, openFor: step.to == .open ? .seconds(30) : nil, sequence: step.sequence))
    }

    /// A recorder at 100 s that received `steps` in that order.
    static func recorder(receiving steps: [Step]) -> TelemetryFixture {
        let fixture = TelemetryFixture()
        fixture.advance(seconds: 100)
        for step in steps { fixture.recorder.receive(event(step)) }
        return fixture
    }

    static func permutations<Element>(_ items: [Element]) -> [[Element]] {
        guard let first = items.first else { return [[]] }
        return permutations(Array(items.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in
                var order = rest
                order.insert(first, at: index)
                return order
            }
        }
    }

    @Test("Every order of a breaker's numbered transitions gives the state, opens and time open of the order made")
    func everyOrder() {
        for length in 1...Self.life.count {
            let (state, opens, timeOpen) = Self.expected[length - 1]
            for order in Self.permutations(Array(Self.life.prefix(length))) {
                let fixture = Self.recorder(receiving: order)
                let received = order.map(\.sequence)
                let source = fixture.recorder.statistics().sources["lever"]
                #expect(source?.breakerState == state, "received \(received)")
                #expect(source?.breakerOpens == opens, "received \(received)")
                #expect(source?.timeOpen == timeOpen, "received \(received)")
                #expect(fixture.recorder.metrics().sources["lever"]?.breakerState == state, "received \(received)")
            }
        }
    }

    @Test("The snapshot keeps each transition's sequence, in the record's existing size")
    func snapshotKeepsSequence() {
        let large = UInt64(1) << 47 + 3
        let fixture = Self.recorder(receiving: [
            Step(seconds: 1, from: .closed, to: .open, sequence: large),
            Step(seconds: 2, from: .open, to: .halfOpen, sequence: nil),
            Step(seconds: 3, from: .halfOpen, to: .closed, sequence: 0),
            Step(seconds: 4, from: .closed, to: .open, sequence: .max),
        ])
        let sequences = fixture.recorder.snapshot().map { $0.transition?.sequence }
        #expect(sequences == [large, nil, 0, UInt64(1) << 48 - 2])
        #expect(TelemetryRecorder.recordStride <= 72)
    }

    @Test("Of two transitions with the same sequence, the one received later is the state")
    func sameSequence() {
        let opened = Step(seconds: 10, from: .closed, to: .open, sequence: 1)
        let halfOpen = Step(seconds: 40, from: .open, to: .halfOpen, sequence: 2)
        let closed = Step(seconds: 41, from: .open, to: .closed, sequence: 2)
        for (order, state) in [
            ([opened, halfOpen, closed], BreakerState.closed), ([opened, closed, halfOpen], .halfOpen),
        ] {
            let fixture = Self.recorder(receiving: order)
            #expect(fixture.recorder.statistics().sources["lever"]?.breakerState == state)
            #expect(fixture.recorder.metrics().sources["lever"]?.breakerState == state)
        }
    }

    @Test("Unnumbered transitions are taken in the order received")
    func unnumbered() {
        let opened = Step(seconds: 10, from: .closed, to: .open, sequence: nil)
        let closed = Step(seconds: 40, from: .open, to: .closed, sequence: nil)
        let fixture = Self.recorder(receiving: [closed, opened])
        #expect(fixture.recorder.statistics().sources["lever"]?.breakerState == .open)
        #expect(fixture.recorder.metrics().sources["lever"]?.breakerState == .open)
    }

    @Test("A recreated pipeline's breaker starts over at sequence 0: its transitions replace the old breaker's")
    func pipelineRecreated() {
        let created = Step(seconds: 50, from: .closed, to: .closed, sequence: 0, kind: .pipelineCreated)
        let reopened = Step(seconds: 80, from: .closed, to: .open, sequence: 1)
        let old = Array(Self.life.prefix(3))

        let recreated = Self.recorder(receiving: [old[1], old[2], old[0], created])
        var source = recreated.recorder.statistics().sources["lever"]
        #expect(source?.breakerState == .closed)
        #expect(source?.timeOpen == .seconds(39))
        #expect(recreated.recorder.metrics().sources["lever"]?.breakerState == .closed)

        let opened = Self.recorder(receiving: [old[2], old[0], old[1], created, reopened])
        source = opened.recorder.statistics().sources["lever"]
        #expect(source?.breakerState == .open)
        #expect(source?.breakerOpens == 3)
        #expect(source?.timeOpen == .seconds(59))
        #expect(opened.recorder.metrics().sources["lever"]?.breakerState == .open)

        // Transitions name no breaker: one of the old breaker received after the new pipeline's creation is
        // taken as the new breaker's.
        let late = Step(seconds: 45, from: .open, to: .halfOpen, sequence: 4)
        let straggler = Self.recorder(receiving: [old[0], old[1], old[2], created, late])
        #expect(straggler.recorder.statistics().sources["lever"]?.breakerState == .halfOpen)
        #expect(straggler.recorder.metrics().sources["lever"]?.breakerState == .halfOpen)
    }

    @Test("A pipeline recreated without a breaker ends the old breaker's state: no open breaker stays behind")
    func pipelineRecreatedWithoutBreaker() throws {
        let fixture = Self.recorder(receiving: [Self.life[0]])  // open at 10 s
        fixture.recorder.receive(
            ResilienceEvent(kind: .pipelineCreated, key: "lever", time: ResilienceInstant(offset: .seconds(50))))
        let source = fixture.recorder.statistics().sources["lever"]
        #expect(source?.breakerState == nil)
        #expect(source?.timeOpen == .seconds(40))
        #expect(fixture.recorder.metrics().sources["lever"]?.breakerState == nil)
        let samples = try PrometheusValidator.validate(PrometheusExporter().render(fixture.recorder.metrics()))
        #expect(!samples.contains { $0.name == "resilience_breaker_state" })
        #expect(HealthMonitor(recorder: fixture.recorder).evaluate().alert("every-breaker-open") == nil)
        // A later pipeline with a breaker has its state again.
        fixture.recorder.receive(
            Self.event(Step(seconds: 60, from: .closed, to: .closed, sequence: 0, kind: .pipelineCreated)))
        #expect(fixture.recorder.metrics().sources["lever"]?.breakerState == .closed)
        #expect(fixture.recorder.statistics().sources["lever"]?.breakerState == .closed)
    }

    @Test("Keys are ordered apart")
    func keysApart() {
        let fixture = TelemetryFixture()
        fixture.advance(seconds: 100)
        fixture.recorder.receive(Self.event(Self.life[1], key: "a"))
        fixture.recorder.receive(Self.event(Self.life[4], key: "b"))
        fixture.recorder.receive(Self.event(Self.life[0], key: "a"))
        fixture.recorder.receive(Self.event(Self.life[0], key: "b"))
        let stats = fixture.recorder.statistics()
        #expect(stats.sources["a"]?.breakerState == .halfOpen)
        #expect(stats.sources["b"]?.breakerState == .closed)
        #expect(fixture.recorder.metrics().sources["a"]?.breakerState == .halfOpen)
        #expect(fixture.recorder.metrics().sources["b"]?.breakerState == .closed)
    }
}
