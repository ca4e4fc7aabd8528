import ResilienceCore

/// A bounded table that maps repeated strings (keys, operations, kinds, codes) to small integers, so each
/// stored record holds two bytes instead of a string. Past ``capacity`` distinct strings, new ones map to
/// the overflow entry (`"other"`; id 0 is the empty string), so memory stays bounded whatever callers send.
struct InternTable: Sendable {
    static let overflowName = "other"
    let capacity: Int
    private(set) var names: [String] = ["", InternTable.overflowName]
    private var ids: [String: UInt16] = ["": 0, InternTable.overflowName: 1]

    init(capacity: Int) {
        self.capacity = min(max(capacity, 3), Int(UInt16.max))
    }

    /// The id for `name`, adding it (redacted by `redactor` for display) when there is room.
    mutating func id(for name: String, redactor: Redactor?) -> UInt16 {
        if let id = ids[name] { return id }
        guard names.count < capacity else { return 1 }
        let id = UInt16(names.count)
        names.append(redactor?.redact(name) ?? name)
        ids[name] = id
        return id
    }

    /// The string for `id`.
    func name(_ id: UInt16) -> String { Int(id) < names.count ? names[Int(id)] : InternTable.overflowName }

    /// Bytes held by the names outside their inline representation (estimate: native string storage).
    var heapBytes: Int {
        names.reduce(0) { $0 + StoredRecord.heapBytes(of: $1) } + names.capacity * MemoryLayout<String>.stride
            + ids.capacity * (MemoryLayout<String>.stride + MemoryLayout<UInt16>.stride)
    }
}
