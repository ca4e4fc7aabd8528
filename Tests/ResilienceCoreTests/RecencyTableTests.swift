import ResilienceCore
import Testing

@Suite("RecencyTable: a dictionary that keeps its keys oldest first")
struct RecencyTableTests {
    /// The keys from oldest to newest, read by removing them from a copy.
    static func order<Value>(_ table: RecencyTable<String, Value>) -> [String] {
        var copy = table
        var keys: [String] = []
        while let oldest = copy.removeOldest() { keys.append(oldest.key) }
        return keys
    }

    @Test("Setting a key makes it the newest; updating its value keeps its place")
    func setAndUpdate() {
        var table = RecencyTable<String, Int>()
        for (index, key) in ["a", "b", "c"].enumerated() { table.setNewest(index, for: key) }
        #expect(Self.order(table) == ["a", "b", "c"])
        table.setNewest(10, for: "a")
        #expect(Self.order(table) == ["b", "c", "a"])
        table.update(20, for: "b")
        table.update(30, for: "missing")
        #expect(Self.order(table) == ["b", "c", "a"])
        #expect(table["b"] == 20 && table["a"] == 10 && table["missing"] == nil)
        #expect(table.count == 3)
        #expect(table.oldest?.key == "b" && table.oldest?.value == 20)
    }

    @Test("Removing keys from anywhere in the order, and reusing their room, keeps the others in order")
    func removeAnywhere() {
        var table = RecencyTable<String, Int>()
        for key in ["a", "b", "c", "d", "e"] { table.setNewest(0, for: key) }
        #expect(table.removeValue(for: "c") == 0)
        #expect(table.removeValue(for: "c") == nil)
        #expect(table.removeOldest()?.key == "a")
        table.removeAll { $0 == "e" }
        #expect(Self.order(table) == ["b", "d"])
        for key in ["f", "g", "h"] { table.setNewest(1, for: key) }
        #expect(Self.order(table) == ["b", "d", "f", "g", "h"])
        table.removeAll()
        #expect(table.count == 0 && table.oldest == nil && table.removeOldest() == nil)
        table.setNewest(2, for: "i")
        #expect(Self.order(table) == ["i"])
    }

    @Test("Against a plain array as the model: 20,000 random operations agree in every step's order and values")
    func matchesAModel() {
        var random = PseudoRandomGenerator(seed: 7)
        var table = RecencyTable<String, Int>()
        var model: [(key: String, value: Int)] = []
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<40, using: &random))"
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                table.setNewest(step, for: key)
                model.removeAll { $0.key == key }
                model.append((key, step))
            case 1:
                #expect(table.removeValue(for: key) == model.first { $0.key == key }?.value)
                model.removeAll { $0.key == key }
            case 2:
                #expect(table.removeOldest()?.key == model.first?.key)
                if !model.isEmpty { model.removeFirst() }
            default:
                table.update(-step, for: key)
                if let index = model.firstIndex(where: { $0.key == key }) { model[index].value = -step }
            }
            #expect(table.count == model.count)
        }
        #expect(Self.order(table) == model.map(\.key))
        #expect(model.allSatisfy { table[$0.key] == $0.value })
    }
}
