/// An ordered list of HTTP header fields with case-insensitive lookup; repeated names are kept.
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Hashable, Sendable {
        /// The name as sent.
        public var name: String
        /// The value.
        public var value: String
        /// Creates a field.
        ///
        /// - Parameters:
        ///   - name: The name as sent.
        ///   - value: The field value, as sent.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Creates headers from fields.
    ///
    /// - Parameter fields: The fields in order. Default: `[]`.
    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Creates headers from a literal.
    ///
    /// - Parameter elements: Name/value pairs, kept in order; a repeated name adds another field.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The first value for `name` (case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            remove(name)
            if let newValue { add(name: name, value: newValue) }
        }
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// All values for `name` joined with `", "` as RFC 9110 §5.3 combines repeated fields.
    public func combinedValue(for name: String) -> String? {
        let values = values(for: name)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Appends a field.
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) { fields.removeAll { $0.name.caseInsensitiveEquals(name) } }

    /// True when a field named `name` is present.
    public func contains(_ name: String) -> Bool { fields.contains { $0.name.caseInsensitiveEquals(name) } }

    /// `Name: value` lines.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

extension String {
    /// Whether the two names are equal once lowercased. Field names are ASCII tokens (RFC 9110 §5.1), compared
    /// byte by byte with ASCII case folding, without allocating; a name with other characters is lowercased
    /// as a whole.
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var isASCII = true
        for (left, right) in zip(utf8, other.utf8) {
            guard left < 0x80, right < 0x80 else {
                isASCII = false
                break
            }
            guard left == right || Self.asciiLowercase(left) == Self.asciiLowercase(right) else { return false }
        }
        return isASCII || lowercased() == other.lowercased()
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
