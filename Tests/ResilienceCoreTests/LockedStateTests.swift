import ResilienceTesting
import Testing

@Suite("LockedState")
struct LockedStateTests {
    @Test("Concurrent increments are never lost")
    func concurrentIncrements() async {
        let box = LockedBox(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask { for _ in 0..<1_000 { box.mutate { $0 += 1 } } }
            }
        }
        #expect(box.value == 64_000)
    }
}
