import ResilienceTesting
import Testing

@testable import ResiliencePolicies

@Suite("WaiterQueue")
struct WaiterQueueTests {
    @Test func firstInFirstOut() {
        var queue = WaiterQueue<Int>()
        for value in 0..<5 { _ = queue.append(value) }
        #expect(queue.count == 5)
        #expect((0..<5).map { _ in queue.popFirst()?.element } == [0, 1, 2, 3, 4])
        #expect(queue.popFirst() == nil)
        #expect(queue.isEmpty)
    }

    @Test("Removing by handle from the front, middle and back keeps the others in order")
    func removalFromAnywhere() {
        var queue = WaiterQueue<Int>()
        let handles = (0..<6).map { queue.append($0) }
        #expect(queue.remove(handles[0]) == 0)
        #expect(queue.remove(handles[3]) == 3)
        #expect(queue.remove(handles[5]) == 5)
        #expect(queue.remove(handles[3]) == nil)
        #expect(queue.count == 3)
        #expect((0..<3).map { _ in queue.popFirst()?.element } == [1, 2, 4])
    }

    @Test("A handle whose node was reused finds nothing")
    func staleHandles() {
        var queue = WaiterQueue<String>()
        let first = queue.append("first")
        #expect(queue.popFirst()?.element == "first")
        let second = queue.append("second")
        #expect(queue[first] == nil)
        #expect(queue.remove(first) == nil)
        #expect(queue[second] == "second")
        #expect(first.generation != second.generation)
    }

    @Test("A claimed waiter is reachable but not queued until it joins")
    func claimThenEnqueue() {
        var queue = WaiterQueue<Int>()
        let early = queue.append(1)
        let claimed = queue.claim(2)
        #expect(queue.count == 1)
        #expect(queue[claimed] == 2)
        queue[claimed] = 3
        queue.enqueue(claimed)
        queue.enqueue(claimed)
        #expect(queue.count == 2)
        #expect(queue.remove(early) == 1)
        #expect(queue.popFirst()?.element == 3)
        let abandoned = queue.claim(4)
        #expect(queue.remove(abandoned) == 4)
        #expect(queue.isEmpty)
    }

    @Test("Random appends, pops and removals (stale handles included) agree with an array")
    func agreesWithAnArray() {
        var generator = PseudoRandomGenerator(seed: 23)
        var queue = WaiterQueue<Int>()
        var model: [(handle: WaiterQueue<Int>.Handle, value: Int)] = []
        var departed: [WaiterQueue<Int>.Handle] = []
        for value in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                model.append((queue.append(value), value))
            case 5..<7:
                let popped = queue.popFirst()
                #expect(popped?.element == model.first?.value)
                if !model.isEmpty { departed.append(model.removeFirst().handle) }
            case 7..<9 where !model.isEmpty:
                let index = Int.random(in: 0..<model.count, using: &generator)
                let leaving = model.remove(at: index)
                #expect(queue.remove(leaving.handle) == leaving.value)
                departed.append(leaving.handle)
            default:
                if let stale = departed.randomElement(using: &generator) { #expect(queue.remove(stale) == nil) }
            }
            #expect(queue.count == model.count)
        }
        var drained: [Int] = []
        while let next = queue.popFirst() { drained.append(next.element) }
        #expect(drained == model.map(\.value))
    }
}
