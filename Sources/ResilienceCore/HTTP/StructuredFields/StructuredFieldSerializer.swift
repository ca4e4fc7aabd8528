// RFC 9651 §4.1: serialising structured fields, one algorithm per section.

extension StructuredFieldItem {
    /// The item as a field value (RFC 9651 §4.1.3).
    ///
    /// - Throws: ``StructuredFieldError`` when a value is outside what the RFC can carry (an integer beyond
    ///   15 digits, a string with non-ASCII characters, an invalid token or key).
    public func serialized() throws(StructuredFieldError) -> String {
        try StructuredFieldSerializer.text { serializer throws(StructuredFieldError) in try serializer.serialize(self) }
    }
}

extension StructuredFieldList {
    /// The list as a field value (RFC 9651 §4.1.1); an empty list is an empty string (the field is omitted).
    ///
    /// - Throws: ``StructuredFieldError`` when a value is outside what the RFC can carry.
    public func serialized() throws(StructuredFieldError) -> String {
        try StructuredFieldSerializer.text { serializer throws(StructuredFieldError) in
            for (position, member) in members.enumerated() {
                if position > 0 { serializer.append(", ") }
                try serializer.serialize(member)
            }
        }
    }
}

extension StructuredFieldDictionary {
    /// The dictionary as a field value (RFC 9651 §4.1.2); an empty dictionary is an empty string (the field
    /// is omitted). A member whose value is the item `true` is written as its key alone.
    ///
    /// - Throws: ``StructuredFieldError`` when a value is outside what the RFC can carry.
    public func serialized() throws(StructuredFieldError) -> String {
        try StructuredFieldSerializer.text { serializer throws(StructuredFieldError) in
            for (position, entry) in storage.entries.enumerated() {
                if position > 0 { serializer.append(", ") }
                try serializer.serializeKey(entry.key)
                if case .item(let item) = entry.value, item.bareItem == .boolean(true) {
                    try serializer.serialize(item.parameters)
                } else {
                    serializer.output.append(StructuredFieldGrammar.equals)
                    try serializer.serialize(entry.value)
                }
            }
        }
    }
}

extension StructuredFieldBareItem {
    /// The bare item as it appears in a field value (RFC 9651 §4.1.3.1).
    ///
    /// - Throws: ``StructuredFieldError`` when the value is outside what the RFC can carry.
    public func serialized() throws(StructuredFieldError) -> String {
        try StructuredFieldSerializer.text { serializer throws(StructuredFieldError) in try serializer.serialize(self) }
    }
}

/// The serialisation algorithms of RFC 9651 §4.1, writing bytes.
struct StructuredFieldSerializer {
    /// The largest magnitude of an integer or date (15 digits).
    static let integerLimit: Int64 = 999_999_999_999_999

    var output: [UInt8] = []

    var text: String { String(decoding: output, as: UTF8.self) }

    /// The field value `write` serialises into a new serializer.
    static func text(
        _ write: (inout StructuredFieldSerializer) throws(StructuredFieldError) -> Void
    ) throws(StructuredFieldError) -> String {
        var serializer = StructuredFieldSerializer()
        try write(&serializer)
        return serializer.text
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    /// §4.1.1.1 Serializing an Inner List, or §4.1.3 an Item.
    mutating func serialize(_ member: StructuredFieldMember) throws(StructuredFieldError) {
        switch member {
        case .item(let item): try serialize(item)
        case .innerList(let list):
            output.append(StructuredFieldGrammar.openParenthesis)
            for (position, item) in list.items.enumerated() {
                if position > 0 { output.append(StructuredFieldGrammar.space) }
                try serialize(item)
            }
            output.append(StructuredFieldGrammar.closeParenthesis)
            try serialize(list.parameters)
        }
    }

    /// §4.1.3 Serializing an Item.
    mutating func serialize(_ item: StructuredFieldItem) throws(StructuredFieldError) {
        try serialize(item.bareItem)
        try serialize(item.parameters)
    }

    /// §4.1.1.2 Serializing Parameters.
    mutating func serialize(_ parameters: StructuredFieldParameters) throws(StructuredFieldError) {
        for entry in parameters.storage.entries {
            let (key, value) = (entry.key, entry.value)
            output.append(StructuredFieldGrammar.semicolon)
            try serializeKey(key)
            if value != .boolean(true) {
                output.append(StructuredFieldGrammar.equals)
                try serialize(value)
            }
        }
    }

    /// §4.1.1.3 Serializing a Key.
    mutating func serializeKey(_ key: String) throws(StructuredFieldError) {
        let bytes = key.utf8
        guard let first = bytes.first,
            StructuredFieldGrammar.isLowercaseLetter(first) || first == StructuredFieldGrammar.star,
            bytes.allSatisfy(StructuredFieldGrammar.isKeyCharacter)
        else { throw StructuredFieldError(.invalidKey) }
        output.append(contentsOf: bytes)
    }

    /// §4.1.3.1 Serializing a Bare Item.
    mutating func serialize(_ bareItem: StructuredFieldBareItem) throws(StructuredFieldError) {
        switch bareItem {
        case .integer(let value): try serializeInteger(value)
        case .decimal(let value): try serializeDecimal(value)
        case .string(let value): try serializeString(value)
        case .token(let value): try serializeToken(value)
        case .byteSequence(let value):
            output.append(StructuredFieldGrammar.colon)
            StructuredFieldBase64.encode(value, into: &output)
            output.append(StructuredFieldGrammar.colon)
        case .boolean(let value): append(value ? "?1" : "?0")
        case .date(let value):
            output.append(StructuredFieldGrammar.at)
            try serializeInteger(value)
        case .displayString(let value): serializeDisplayString(value)
        }
    }

    /// §4.1.4 Serializing an Integer.
    private mutating func serializeInteger(_ value: Int64) throws(StructuredFieldError) {
        guard value >= -Self.integerLimit && value <= Self.integerLimit else {
            throw StructuredFieldError(.outOfRange)
        }
        output.append(contentsOf: String(value).utf8)
    }

    /// §4.1.5 Serializing a Decimal (the value is already rounded to thousandths).
    private mutating func serializeDecimal(_ value: StructuredFieldDecimal) throws(StructuredFieldError) {
        guard value.thousandths.magnitude <= 999_999_999_999_999 else { throw StructuredFieldError(.outOfRange) }
        value.write(into: &output)
    }

    /// §4.1.6 Serializing a String.
    private mutating func serializeString(_ value: String) throws(StructuredFieldError) {
        output.append(StructuredFieldGrammar.quote)
        for byte in value.utf8 {
            guard byte >= 0x20 && byte <= 0x7E else { throw StructuredFieldError(.invalidString) }
            if byte == StructuredFieldGrammar.quote || byte == StructuredFieldGrammar.backslash {
                output.append(StructuredFieldGrammar.backslash)
            }
            output.append(byte)
        }
        output.append(StructuredFieldGrammar.quote)
    }

    /// §4.1.7 Serializing a Token.
    private mutating func serializeToken(_ value: String) throws(StructuredFieldError) {
        let bytes = value.utf8
        guard let first = bytes.first,
            StructuredFieldGrammar.isLetter(first) || first == StructuredFieldGrammar.star,
            bytes.allSatisfy(StructuredFieldGrammar.isTokenCharacter)
        else { throw StructuredFieldError(.invalidToken) }
        output.append(contentsOf: bytes)
    }

    /// §4.1.11 Serializing a Display String: `%`, `"`, controls and non-ASCII bytes are percent-encoded in
    /// lowercase hexadecimal.
    private mutating func serializeDisplayString(_ value: String) {
        let hex = Array("0123456789abcdef".utf8)
        append("%\"")
        for byte in value.utf8 {
            if byte == StructuredFieldGrammar.percent || byte == StructuredFieldGrammar.quote || byte < 0x20
                || byte > 0x7E
            {
                output.append(StructuredFieldGrammar.percent)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            } else {
                output.append(byte)
            }
        }
        output.append(StructuredFieldGrammar.quote)
    }
}
