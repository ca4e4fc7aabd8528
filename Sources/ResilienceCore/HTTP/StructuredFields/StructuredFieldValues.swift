// The value types of RFC 9651 Structured Field Values for HTTP: bare items, items with parameters, inner
// lists, lists and dictionaries.
//
// Parse a field with ``StructuredFieldItem/init(parsing:)``, ``StructuredFieldList/init(parsing:)`` or
// ``StructuredFieldDictionary/init(parsing:)`` (which one depends on the field's definition), and turn a value
// back into a field value with `serialized()`. Both follow the RFC's algorithms (sections 4.1 and 4.2)
// exactly, including its limits; anything outside them is a ``StructuredFieldError``.

/// One bare item: the value of an item or a parameter, without parameters of its own.
public enum StructuredFieldBareItem: Hashable, Sendable {
    /// An integer of at most 15 digits (−999,999,999,999,999 to 999,999,999,999,999).
    case integer(Int64)
    /// A decimal with at most 12 integer and 3 fractional digits.
    case decimal(StructuredFieldDecimal)
    /// A string of printable ASCII characters (0x20–0x7E).
    case string(String)
    /// A token: an ALPHA or `*`, then `tchar`, `:` or `/` characters.
    case token(String)
    /// A byte sequence, sent as base64 between colons.
    case byteSequence([UInt8])
    /// A boolean, sent as `?1` or `?0`.
    case boolean(Bool)
    /// A date: seconds since 1970-01-01T00:00:00Z, with the same range as an integer.
    case date(Int64)
    /// A display string: Unicode text, sent percent-encoded as UTF-8.
    case displayString(String)
}

extension StructuredFieldBareItem {
    /// The integer, or nil when the item is not an integer.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The string or token text, or nil for other types.
    public var stringValue: String? {
        switch self {
        case .string(let value), .token(let value): return value
        default: return nil
        }
    }

    /// The boolean, or nil when the item is not a boolean.
    public var booleanValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }
}

/// An exact structured-field decimal: a count of thousandths, so that `1.5` is `1500` thousandths.
///
/// Parsing keeps the value exactly (a field carries at most three fractional digits). Serialising fails when
/// the integer part has more than 12 digits.
public struct StructuredFieldDecimal: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The value in thousandths.
    public var thousandths: Int64

    /// Creates a decimal from its value in thousandths.
    ///
    /// - Parameter thousandths: The value multiplied by 1,000 (`1500` is `1.5`).
    public init(thousandths: Int64) { self.thousandths = thousandths }

    /// Creates a decimal from a floating-point value, rounded to three fractional digits with ties to even, as
    /// RFC 9651 §4.1.5 asks. The rounding applies to the shortest decimal text that reads back as `value`
    /// (`0.0025` rounds to `0.002`, although the nearest binary value lies slightly above 0.0025). Nil for a
    /// value that is not finite or whose magnitude reaches 10^15.
    ///
    /// - Parameter value: The number to round.
    public init?(_ value: Double) {
        guard value.isFinite, value.magnitude < 1e15 else { return nil }
        let text = value.magnitude.description
        let negative = value < 0
        guard !text.contains("e") else {
            // Only magnitudes below 1e-4 print with an exponent here; they round to zero.
            self.init(thousandths: 0)
            return
        }
        var whole: Int64 = 0
        var fraction: [UInt8] = []
        var seenPoint = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                seenPoint = true
            } else if seenPoint {
                fraction.append(byte &- UInt8(ascii: "0"))
            } else {
                whole = whole * 10 + Int64(byte &- UInt8(ascii: "0"))
            }
        }
        var scaled = whole * 1_000
        for index in 0..<3 { scaled += Int64(index < fraction.count ? fraction[index] : 0) * [100, 10, 1][index] }
        if fraction.count > 3 {
            let first = fraction[3]
            let restNonZero = fraction.dropFirst(4).contains { $0 != 0 }
            if first > 5 || (first == 5 && (restNonZero || scaled % 2 == 1)) { scaled += 1 }
        }
        self.init(thousandths: negative ? -scaled : scaled)
    }

    /// The value as a `Double`.
    public var doubleValue: Double { Double(thousandths) / 1_000 }

    /// Orders decimals by value.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.thousandths < rhs.thousandths }

    /// The value in the field's form: `-1.5`, `10.0`, `0.001`.
    public var description: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the field's form: the integer part, a dot, and the fraction without trailing zeros (at least
    /// one digit).
    func write(into output: inout [UInt8]) {
        let magnitude = thousandths.magnitude
        if thousandths < 0 { output.append(UInt8(ascii: "-")) }
        output.append(contentsOf: String(magnitude / 1_000).utf8)
        output.append(UInt8(ascii: "."))
        var fraction = magnitude % 1_000
        var digits = 3
        while digits > 1 && fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        var divisor: UInt64 = digits == 3 ? 100 : digits == 2 ? 10 : 1
        while divisor > 0 {
            output.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }
}

/// Parameters: an ordered map from keys to bare items, attached to an item or an inner list.
///
/// Setting a key that is present replaces its value in place, as the RFC's ordered maps do.
public struct StructuredFieldParameters: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    @usableFromInline var storage: StructuredFieldOrderedMap<StructuredFieldBareItem>

    /// Creates empty parameters.
    public init() { storage = StructuredFieldOrderedMap() }

    /// Creates parameters from key/value pairs in order; a repeated key keeps its first position and its
    /// last value.
    ///
    /// - Parameter elements: The parameters in order.
    public init(dictionaryLiteral elements: (String, StructuredFieldBareItem)...) {
        storage = StructuredFieldOrderedMap()
        for (key, value) in elements { storage[key] = value }
    }

    /// The position of the first parameter.
    @inlinable public var startIndex: Int { 0 }
    /// The position after the last parameter.
    @inlinable public var endIndex: Int { storage.count }
    /// The parameter at `position`.
    @inlinable public subscript(position: Int) -> (key: String, value: StructuredFieldBareItem) {
        (storage.entries[position].key, storage.entries[position].value)
    }

    /// The value for `key`, or nil; setting nil removes the key.
    public subscript(key: String) -> StructuredFieldBareItem? {
        get { storage[key] }
        set { storage[key] = newValue }
    }

    /// Equal when the same keys carry the same values in the same order.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage == rhs.storage }

    /// Hashes the keys and values in order.
    public func hash(into hasher: inout Hasher) { storage.hash(into: &hasher) }
}

/// An item: a bare item with parameters.
public struct StructuredFieldItem: Hashable, Sendable {
    /// The value.
    public var bareItem: StructuredFieldBareItem
    /// The parameters, in order.
    public var parameters: StructuredFieldParameters

    /// Creates an item.
    ///
    /// - Parameters:
    ///   - bareItem: The value.
    ///   - parameters: The parameters, in order. Default: none.
    public init(_ bareItem: StructuredFieldBareItem, parameters: StructuredFieldParameters = [:]) {
        self.bareItem = bareItem
        self.parameters = parameters
    }
}

/// An inner list: items in parentheses, with parameters of its own.
public struct StructuredFieldInnerList: Hashable, Sendable {
    /// The items, in order.
    public var items: [StructuredFieldItem]
    /// The inner list's own parameters.
    public var parameters: StructuredFieldParameters

    /// Creates an inner list.
    ///
    /// - Parameters:
    ///   - items: The items, in order.
    ///   - parameters: The inner list's own parameters. Default: none.
    public init(_ items: [StructuredFieldItem], parameters: StructuredFieldParameters = [:]) {
        self.items = items
        self.parameters = parameters
    }
}

/// A member of a list or a dictionary: an item or an inner list.
public enum StructuredFieldMember: Hashable, Sendable {
    /// An item.
    case item(StructuredFieldItem)
    /// An inner list.
    case innerList(StructuredFieldInnerList)

    /// The member's parameters (the item's, or the inner list's own).
    public var parameters: StructuredFieldParameters {
        switch self {
        case .item(let item): return item.parameters
        case .innerList(let list): return list.parameters
        }
    }

    /// The item, or nil for an inner list.
    public var item: StructuredFieldItem? {
        if case .item(let item) = self { return item }
        return nil
    }
}

/// A list field: members separated by commas. An empty list is an absent field.
public struct StructuredFieldList: Hashable, Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    /// The members, in order.
    public var members: [StructuredFieldMember]

    /// Creates a list.
    ///
    /// - Parameter members: The members, in order.
    public init(_ members: [StructuredFieldMember]) { self.members = members }

    /// Creates a list from a literal.
    ///
    /// - Parameter elements: The members, in order.
    public init(arrayLiteral elements: StructuredFieldMember...) { members = elements }

    /// The position of the first member.
    @inlinable public var startIndex: Int { members.startIndex }
    /// The position after the last member.
    @inlinable public var endIndex: Int { members.endIndex }
    /// The member at `position`.
    @inlinable public subscript(position: Int) -> StructuredFieldMember { members[position] }
}

/// A dictionary field: an ordered map from keys to members. An empty dictionary is an absent field.
///
/// Setting a key that is present replaces its value in place, as the RFC's ordered maps do.
public struct StructuredFieldDictionary: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    @usableFromInline var storage: StructuredFieldOrderedMap<StructuredFieldMember>

    /// Creates an empty dictionary.
    public init() { storage = StructuredFieldOrderedMap() }

    /// Creates a dictionary from key/member pairs in order; a repeated key keeps its first position and its
    /// last value.
    ///
    /// - Parameter elements: The members in order.
    public init(dictionaryLiteral elements: (String, StructuredFieldMember)...) {
        storage = StructuredFieldOrderedMap()
        for (key, value) in elements { storage[key] = value }
    }

    /// The position of the first member.
    @inlinable public var startIndex: Int { 0 }
    /// The position after the last member.
    @inlinable public var endIndex: Int { storage.count }
    /// The member at `position` with its key.
    @inlinable public subscript(position: Int) -> (key: String, value: StructuredFieldMember) {
        (storage.entries[position].key, storage.entries[position].value)
    }

    /// The member for `key`, or nil; setting nil removes the key.
    public subscript(key: String) -> StructuredFieldMember? {
        get { storage[key] }
        set { storage[key] = newValue }
    }

    /// Equal when the same keys carry the same members in the same order.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage == rhs.storage }

    /// Hashes the keys and members in order.
    public func hash(into hasher: inout Hasher) { storage.hash(into: &hasher) }
}

/// The ordered map behind parameters and dictionaries: entries in insertion order, each with a seeded hash of
/// its key's bytes that the parser computes while it reads the key. Up to ``scanLimit`` entries, a lookup
/// compares those hashes in order; beyond it, an open-addressing table of positions finds the key in constant
/// expected time, so a hostile field with many thousands of keys stays linear. No per-key `Hasher` run and
/// no copy of an entry happen on the parser's path.
@usableFromInline
struct StructuredFieldOrderedMap<Value: Hashable & Sendable>: Hashable, Sendable {
    /// One key and its value, with the key's hash.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var key: String
        @usableFromInline var value: Value
        var keyHash: UInt64
    }

    /// Up to this many entries, lookups scan the hashes; beyond it, they use ``slots``.
    static var scanLimit: Int { 8 }

    @usableFromInline private(set) var entries: [Entry] = []
    /// Open addressing over `entries`: 0 is an empty slot, `p + 1` the entry at position `p`. Empty while the
    /// map is small and no larger capacity was reserved; otherwise a power of two at least twice the entry
    /// count, holding every entry.
    private var slots: [Int32] = []

    @usableFromInline var count: Int { entries.count }

    subscript(key: String) -> Value? {
        get { position(of: key, keyHash: StructuredFieldKeyHash.hash(key)).map { entries[$0].value } }
        set {
            let keyHash = StructuredFieldKeyHash.hash(key)
            if let newValue {
                insertOrReplace(key, keyHash: keyHash, newValue)
            } else if let position = position(of: key, keyHash: keyHash) {
                entries.remove(at: position)
                rebuildSlots(forCapacity: entries.count)
            }
        }
    }

    /// Makes room for `capacity` entries, and for their key table when they will need one, so that
    /// inserting up to that many entries neither grows the entries nor rebuilds the table.
    mutating func reserveCapacity(_ capacity: Int) {
        entries.reserveCapacity(capacity)
        if capacity > Self.scanLimit && slots.count < capacity * 2 { rebuildSlots(forCapacity: capacity) }
    }

    /// Sets `key` (whose ``StructuredFieldKeyHash`` is `keyHash`) to `value`: in place when the key is
    /// present, else appended. With a key table, one probe finds either the key or the empty slot the new
    /// entry takes.
    mutating func insertOrReplace(_ key: consuming String, keyHash: UInt64, _ value: consuming Value) {
        guard !slots.isEmpty else {
            if let existing = position(of: key, keyHash: keyHash) {
                entries[existing].value = value
                return
            }
            if entries.capacity == 0 { entries.reserveCapacity(4) }
            entries.append(Entry(key: key, value: value, keyHash: keyHash))
            if entries.count > Self.scanLimit { rebuildSlots(forCapacity: entries.count) }
            return
        }
        let mask = slots.count - 1
        var slot = Self.slot(for: keyHash, mask: mask)
        while true {
            let stored = Int(slots[slot])
            if stored == 0 { break }
            if entries[stored - 1].keyHash == keyHash && entries[stored - 1].key == key {
                entries[stored - 1].value = value
                return
            }
            slot = (slot + 1) & mask
        }
        entries.append(Entry(key: key, value: value, keyHash: keyHash))
        if slots.count >= entries.count * 2 {
            slots[slot] = Int32(truncatingIfNeeded: entries.count)
        } else {
            rebuildSlots(forCapacity: entries.count)
        }
    }

    func position(of key: String, keyHash: UInt64) -> Int? {
        if slots.isEmpty {
            var position = 0
            while position < entries.count {
                if entries[position].keyHash == keyHash && entries[position].key == key { return position }
                position += 1
            }
            return nil
        }
        let mask = slots.count - 1
        var slot = Self.slot(for: keyHash, mask: mask)
        while true {
            let stored = Int(slots[slot])
            if stored == 0 { return nil }
            if entries[stored - 1].keyHash == keyHash && entries[stored - 1].key == key { return stored - 1 }
            slot = (slot + 1) & mask
        }
    }

    /// The first slot to probe: the hash's high bits after a multiplicative mix (the low bits of FNV-1a mix
    /// the last byte least).
    private static func slot(for keyHash: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: (keyHash &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    private mutating func occupy(position: Int) {
        let mask = slots.count - 1
        var slot = Self.slot(for: entries[position].keyHash, mask: mask)
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(truncatingIfNeeded: position + 1)
    }

    /// Rebuilds the table for `capacity` entries (at least the current count), or empties it when that many
    /// entries are few enough to scan.
    private mutating func rebuildSlots(forCapacity capacity: Int) {
        guard capacity > Self.scanLimit else {
            slots = []
            return
        }
        var slotCount = 32
        while slotCount < capacity * 4 { slotCount <<= 1 }
        slots = Array(repeating: 0, count: slotCount)
        for position in entries.indices { occupy(position: position) }
    }

    @usableFromInline static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.entries.count == rhs.entries.count
            && zip(lhs.entries, rhs.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    @usableFromInline func hash(into hasher: inout Hasher) {
        hasher.combine(entries.count)
        for entry in entries {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }
}

/// The hash of a structured-field key: FNV-1a over its bytes from a per-process random basis, so that the
/// keys of a hostile field cannot be chosen to collide in a map's table.
enum StructuredFieldKeyHash {
    static let basis: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64.random(in: .min ... .max)
    static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// Folds one more byte into `hash`.
    @inline(__always)
    static func combine(_ hash: UInt64, _ byte: UInt8) -> UInt64 { (hash ^ UInt64(byte)) &* prime }

    /// The hash of `key`'s UTF-8 bytes.
    static func hash(_ key: String) -> UInt64 {
        var hash = basis
        for byte in key.utf8 { hash = combine(hash, byte) }
        return hash
    }
}
