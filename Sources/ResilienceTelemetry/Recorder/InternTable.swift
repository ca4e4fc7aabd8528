import ResilienceCore

/// A bounded table that maps repeated strings (keys, operations, kinds, codes) to small integers, so each
/// stored record holds two bytes instead of a string. Past ``capacity`` distinct strings, new ones map to
/// the overflow entry (`"other"`; id 0 is the empty string), so memory stays bounded whatever callers send.
/// With a redactor, names are told apart after redaction: names differing only in a secret (a per-request
/// token in a URL) are one entry, and the table holds no secret.
struct InternTable: Sendable {
    static let overflowName = "other"
    let capacity: Int
    private(set) var names: [String] = ["", InternTable.overflowName]
    private var ids: [String: UInt16] = ["": 0, InternTable.overflowName: 1]

    init(capacity: Int) {
        self.capacity = min(max(capacity, 3), Int(UInt16.max))
    }

    /// The last two names looked up, to skip hashing for the common case of repeated keys and kinds.
    private var recent: (String, UInt16, String, UInt16) = ("", 0, "", 0)

    /// The id for `name`, adding it (redacted by `redactor` for display) when there is room.
    mutating func id(for name: String, redactor: Redactor?) -> UInt16 {
        if name == recent.0 { return recent.1 }
        if name == recent.2 {
            recent = (recent.2, recent.3, recent.0, recent.1)
            return recent.1
        }
        let id = lookUp(name, redactor: redactor)
        recent = (name, id, recent.0, recent.1)
        return id
    }

    private mutating func lookUp(_ name: String, redactor: Redactor?) -> UInt16 {
        // Indexed by redacted name: a name without secrets (the common case) is found as is.
        if let id = ids[name] { return id }
        let redacted = redactor?.redact(name) ?? name
        if let id = ids[redacted] { return id }
        guard names.count < capacity else { return 1 }
        let id = UInt16(names.count)
        names.append(redacted)
        ids[redacted] = id
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

/// The recorder's intern tables: keys (which index the per-key counters), operations, failure codes, and small
/// ones for kinds and categories so per-key counters can be flat arrays. Codes have a table of their own: a
/// small vocabulary that an open one (operations named after request paths) must never crowd out.
struct NameTables: Sendable {
    var keys: InternTable
    var operations: InternTable
    var codes: InternTable
    var kinds: InternTable
    var categories: InternTable

    var heapBytes: Int {
        keys.heapBytes + operations.heapBytes + codes.heapBytes + kinds.heapBytes + categories.heapBytes
    }
}
