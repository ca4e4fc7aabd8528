// RFC 9651 §4.2: parsing structured fields, one algorithm per section, iteratively (inner lists are the only
// nesting and cannot nest further), in time and memory linear in the field's length.

extension StructuredFieldItem {
    /// Parses an item field (RFC 9651 §4.2, field type "item").
    ///
    /// - Parameter fieldValue: The field value; several field lines are combined with `", "` first.
    /// - Throws: ``StructuredFieldError`` when the value is not a valid item.
    public init(parsing fieldValue: some StringProtocol) throws(StructuredFieldError) {
        self = try StructuredFieldParser.parse(fieldValue) { (parser) throws(StructuredFieldError) in
            try parser.parseItem()
        }
    }
}

extension StructuredFieldList {
    /// Parses a list field (RFC 9651 §4.2, field type "list"). An empty value is an empty list.
    ///
    /// - Parameter fieldValue: The field value; several field lines are combined with `", "` first.
    /// - Throws: ``StructuredFieldError`` when the value is not a valid list.
    public init(parsing fieldValue: some StringProtocol) throws(StructuredFieldError) {
        self = try StructuredFieldParser.parse(fieldValue) { (parser) throws(StructuredFieldError) in
            try parser.parseList()
        }
    }
}

extension StructuredFieldDictionary {
    /// Parses a dictionary field (RFC 9651 §4.2, field type "dictionary"). An empty value is an empty
    /// dictionary; a repeated key keeps its first position and its last value.
    ///
    /// - Parameter fieldValue: The field value; several field lines are combined with `", "` first.
    /// - Throws: ``StructuredFieldError`` when the value is not a valid dictionary.
    public init(parsing fieldValue: some StringProtocol) throws(StructuredFieldError) {
        self = try StructuredFieldParser.parse(fieldValue) { (parser) throws(StructuredFieldError) in
            try parser.parseDictionary()
        }
    }
}

/// The parsing algorithms of RFC 9651 §4.2 over a field value's bytes.
///
/// Speed: it reads the string's own UTF-8 storage in place (no copy of the field), compares bytes rather than
/// characters, and builds a `String` only for what the value keeps (keys, tokens, strings). It reserves a
/// dictionary's or list's members once, from the commas ahead, rather than growing them member by member.
struct StructuredFieldParser {
    /// The most members reserved ahead of parsing them, so that a hostile field (a megabyte of commas inside
    /// a string) cannot make the parser reserve memory for members it does not have.
    static let reservationLimit = 1_024

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Whether ``text(_:)`` may build short strings with ``StructuredFieldInlineText``.
    private let buildsInlineText = StructuredFieldInlineText.isAvailable

    /// A parser over `bytes`, which must outlive it.
    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Runs `parseValue` as a whole field (§4.2) over the UTF-8 of `fieldValue`, in place when the string's
    /// storage is contiguous and over a contiguous copy otherwise.
    static func parse<Value>(
        _ fieldValue: some StringProtocol, _ parseValue: (inout Self) throws(StructuredFieldError) -> Value
    ) throws(StructuredFieldError) -> Value {
        let result = fieldValue.utf8.withContiguousStorageIfAvailable { buffer in
            var parser = StructuredFieldParser(buffer)
            return Result { () throws(StructuredFieldError) -> Value in try parser.parseField(parseValue) }
        }
        if let result { return try result.get() }
        var contiguous = String(fieldValue)
        contiguous.makeContiguousUTF8()
        return try parse(contiguous, parseValue)
    }

    private var isAtEnd: Bool { position >= bytes.count }
    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// How many of the bytes from the current position on are `byte`, at most ``reservationLimit``: an upper
    /// bound on the members still to parse, less one.
    private func reservation(for byte: UInt8) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let start = UnsafeRawPointer(base + position)
        let length = bytes.count - position
        let target = SIMD16<UInt8>(repeating: byte)
        var count = 0
        var offset = 0
        // Sixteen bytes at a time: each lane of `matches` counts the matches in its column of the chunks, and
        // the lanes are added into `count` before any could pass 255.
        var matches = SIMD16<UInt8>()
        var chunks = 0
        while offset + 16 <= length {
            let chunk = start.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
            matches &+= SIMD16<UInt8>().replacing(with: 1, where: chunk .== target)
            offset += 16
            chunks += 1
            if chunks == 255 || offset + 16 > length {
                count &+= Int(SIMD16<UInt16>(truncatingIfNeeded: matches).wrappedSum())
                matches = SIMD16<UInt8>()
                chunks = 0
            }
        }
        while offset < length {
            if start.load(fromByteOffset: offset, as: UInt8.self) == byte { count &+= 1 }
            offset += 1
        }
        return min(count, Self.reservationLimit)
    }

    private func failure(_ code: StructuredFieldError.Code) -> StructuredFieldError {
        StructuredFieldError(code, offset: position)
    }

    private mutating func skipSpaces() {
        while position < bytes.count && bytes[position] == StructuredFieldGrammar.space { position += 1 }
    }

    private mutating func skipOptionalWhitespace() {
        while position < bytes.count
            && (bytes[position] == StructuredFieldGrammar.space || bytes[position] == StructuredFieldGrammar.tab)
        {
            position += 1
        }
    }

    /// §4.2 steps 2–7: leading spaces, the value, trailing spaces, nothing else.
    mutating func parseField<Value>(
        _ parseValue: (inout Self) throws(StructuredFieldError) -> Value
    ) throws(StructuredFieldError) -> Value {
        skipSpaces()
        let value = try parseValue(&self)
        skipSpaces()
        guard isAtEnd else { throw failure(.trailingCharacters) }
        return value
    }

    /// §4.2.1 Parsing a List.
    mutating func parseList() throws(StructuredFieldError) -> StructuredFieldList {
        var members: [StructuredFieldMember] = []
        if !isAtEnd { members.reserveCapacity(reservation(for: StructuredFieldGrammar.comma) + 1) }
        while !isAtEnd {
            members.append(try parseItemOrInnerList())
            try expectMemberSeparator()
        }
        return StructuredFieldList(members)
    }

    /// The end of a list or dictionary member: OWS, then the end or a comma followed by another member.
    @inline(__always)
    private mutating func expectMemberSeparator() throws(StructuredFieldError) {
        skipOptionalWhitespace()
        guard let next = current else { return }
        guard next == StructuredFieldGrammar.comma else { throw failure(.unexpectedCharacter) }
        position += 1
        skipOptionalWhitespace()
        guard !isAtEnd else { throw failure(.unexpectedEnd) }
    }

    /// §4.2.1.1 Parsing an Item or Inner List.
    private mutating func parseItemOrInnerList() throws(StructuredFieldError) -> StructuredFieldMember {
        if current == StructuredFieldGrammar.openParenthesis { return .innerList(try parseInnerList()) }
        return .item(try parseItem())
    }

    /// §4.2.1.2 Parsing an Inner List.
    private mutating func parseInnerList() throws(StructuredFieldError) -> StructuredFieldInnerList {
        position += 1  // "("
        var items: [StructuredFieldItem] = []
        while !isAtEnd {
            skipSpaces()
            if current == StructuredFieldGrammar.closeParenthesis {
                position += 1
                return StructuredFieldInnerList(items, parameters: try parseParameters())
            }
            if items.isEmpty { items.reserveCapacity(4) }
            items.append(try parseItem())
            guard let next = current else { break }
            guard next == StructuredFieldGrammar.space || next == StructuredFieldGrammar.closeParenthesis else {
                throw failure(.unexpectedCharacter)
            }
        }
        throw failure(.unexpectedEnd)
    }

    /// §4.2.2 Parsing a Dictionary.
    mutating func parseDictionary() throws(StructuredFieldError) -> StructuredFieldDictionary {
        var dictionary = StructuredFieldDictionary()
        if !isAtEnd { dictionary.storage.reserveCapacity(reservation(for: StructuredFieldGrammar.comma) + 1) }
        while !isAtEnd {
            let (key, keyHash) = try parseKey()
            let member: StructuredFieldMember
            if current == StructuredFieldGrammar.equals {
                position += 1
                member = try parseItemOrInnerList()
            } else {
                member = .item(StructuredFieldItem(.boolean(true), parameters: try parseParameters()))
            }
            dictionary.storage.insertOrReplace(key, keyHash: keyHash, member)
            try expectMemberSeparator()
        }
        return dictionary
    }

    /// §4.2.3 Parsing an Item.
    mutating func parseItem() throws(StructuredFieldError) -> StructuredFieldItem {
        let bareItem = try parseBareItem()
        return StructuredFieldItem(bareItem, parameters: try parseParameters())
    }

    /// §4.2.3.1 Parsing a Bare Item.
    private mutating func parseBareItem() throws(StructuredFieldError) -> StructuredFieldBareItem {
        guard let first = current else { throw failure(.unexpectedEnd) }
        switch first {
        case StructuredFieldGrammar.minus, StructuredFieldGrammar.zero...StructuredFieldGrammar.nine:
            return try parseIntegerOrDecimal()
        case StructuredFieldGrammar.quote: return .string(try parseString())
        case StructuredFieldGrammar.star, StructuredFieldGrammar.upperA...StructuredFieldGrammar.upperZ,
            StructuredFieldGrammar.lowerA...StructuredFieldGrammar.lowerZ:
            return .token(parseToken())
        case StructuredFieldGrammar.colon: return .byteSequence(try parseByteSequence())
        case StructuredFieldGrammar.question: return .boolean(try parseBoolean())
        case StructuredFieldGrammar.at: return .date(try parseDate())
        case StructuredFieldGrammar.percent: return .displayString(try parseDisplayString())
        default: throw failure(.unexpectedCharacter)
        }
    }

    /// §4.2.3.2 Parsing Parameters. Most items have none: that case is decided here, without a call.
    @inline(__always)
    private mutating func parseParameters() throws(StructuredFieldError) -> StructuredFieldParameters {
        guard current == StructuredFieldGrammar.semicolon else { return StructuredFieldParameters() }
        return try parseNonEmptyParameters()
    }

    /// §4.2.3.2 Parsing Parameters, from the first `;`.
    private mutating func parseNonEmptyParameters() throws(StructuredFieldError) -> StructuredFieldParameters {
        var parameters = StructuredFieldParameters()
        while current == StructuredFieldGrammar.semicolon {
            position += 1
            skipSpaces()
            let (key, keyHash) = try parseKey()
            var value = StructuredFieldBareItem.boolean(true)
            if current == StructuredFieldGrammar.equals {
                position += 1
                value = try parseBareItem()
            }
            parameters.storage.insertOrReplace(key, keyHash: keyHash, value)
        }
        return parameters
    }

    /// §4.2.3.3 Parsing a Key, with its ``StructuredFieldKeyHash`` computed over the same bytes.
    @inline(__always)
    private mutating func parseKey() throws(StructuredFieldError) -> (key: String, keyHash: UInt64) {
        guard let first = current else { throw failure(.unexpectedEnd) }
        guard StructuredFieldGrammar.isLowercaseLetter(first) || first == StructuredFieldGrammar.star else {
            throw failure(.invalidKey)
        }
        let start = position
        var keyHash = StructuredFieldKeyHash.combine(StructuredFieldKeyHash.basis, first)
        position += 1
        while let byte = current, StructuredFieldGrammar.isKeyCharacter(byte) {
            keyHash = StructuredFieldKeyHash.combine(keyHash, byte)
            position += 1
        }
        return (text(start..<position), keyHash)
    }

    /// The bytes in `range`, which are ASCII (a key, a token or a string the parser has checked), as a
    /// string: up to 15 bytes written straight into the string's inline form by ``StructuredFieldInlineText``
    /// where the platform allows it, else copied into the string's own storage by
    /// `String(unsafeUninitializedCapacity:)`, which takes fewer steps than `String(decoding:as:)`.
    @inline(__always)
    private func text(_ range: Range<Int>) -> String {
        if buildsInlineText && range.count <= StructuredFieldInlineText.capacity, let base = bytes.baseAddress {
            return StructuredFieldInlineText.string(
                ascii: base + range.lowerBound, count: range.count, readable: bytes.count - range.lowerBound)
        }
        return copiedText(range)
    }

    /// The bytes in `range` as a string, copied into the string's own storage.
    @inline(never)
    private func copiedText(_ range: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: range.count) { storage in
            guard let target = storage.baseAddress, let source = bytes.baseAddress else { return 0 }
            target.initialize(from: source + range.lowerBound, count: range.count)
            return range.count
        }
    }

    /// §4.2.4 Parsing an Integer or Decimal.
    private mutating func parseIntegerOrDecimal() throws(StructuredFieldError) -> StructuredFieldBareItem {
        var negative = false
        if current == StructuredFieldGrammar.minus {
            negative = true
            position += 1
        }
        guard let first = current, StructuredFieldGrammar.isDigit(first) else { throw failure(.invalidNumber) }
        // The value is accumulated while the digits are checked; the limits count characters from `start`,
        // the "." included, and fail where the RFC's algorithm fails.
        let start = position
        let whole = try digits(countedFrom: start, atMost: 15)
        guard current == StructuredFieldGrammar.dot else { return .integer(negative ? -whole : whole) }
        guard position - start <= 12 else { throw failure(.invalidNumber) }
        position += 1
        let fractionStart = position
        var fraction = try digits(countedFrom: start, atMost: 16)
        let fractionDigits = position - fractionStart
        guard fractionDigits > 0, fractionDigits <= 3 else { throw failure(.invalidNumber) }
        for _ in fractionDigits..<3 { fraction &*= 10 }
        let thousandths = whole &* 1_000 &+ fraction
        return .decimal(StructuredFieldDecimal(thousandths: negative ? -thousandths : thousandths))
    }

    /// The digits from the current position as a number, failing once the characters from `start` exceed
    /// `limit` (the sign excluded, a decimal's "." included).
    private mutating func digits(countedFrom start: Int, atMost limit: Int) throws(StructuredFieldError) -> Int64 {
        var value: Int64 = 0
        while let byte = current, StructuredFieldGrammar.isDigit(byte) {
            value = value &* 10 &+ Int64(byte &- StructuredFieldGrammar.zero)
            position += 1
            if position - start > limit { throw failure(.invalidNumber) }
        }
        return value
    }

    /// §4.2.5 Parsing a String. A string without escapes is decoded straight from the field's bytes.
    private mutating func parseString() throws(StructuredFieldError) -> String {
        position += 1  // DQUOTE
        let start = position
        var unescaped: [UInt8]?
        while let byte = current {
            position += 1
            if byte == StructuredFieldGrammar.backslash {
                guard let escaped = current else { throw failure(.invalidString) }
                guard escaped == StructuredFieldGrammar.quote || escaped == StructuredFieldGrammar.backslash else {
                    throw failure(.invalidString)
                }
                if unescaped == nil { unescaped = Array(bytes[start..<position - 1]) }
                position += 1
                unescaped?.append(escaped)
            } else if byte == StructuredFieldGrammar.quote {
                if let unescaped { return String(decoding: unescaped, as: UTF8.self) }
                return text(start..<position - 1)
            } else if byte < 0x20 || byte > 0x7E {
                position -= 1
                throw failure(.invalidString)
            } else {
                unescaped?.append(byte)
            }
        }
        throw failure(.invalidString)
    }

    /// §4.2.6 Parsing a Token (the first character is known to be ALPHA or `*`).
    private mutating func parseToken() -> String {
        let start = position
        position += 1
        while let byte = current, StructuredFieldGrammar.isTokenCharacter(byte) { position += 1 }
        return text(start..<position)
    }

    /// §4.2.7 Parsing a Byte Sequence. Missing `=` padding and non-zero pad bits are accepted, as the RFC
    /// recommends; any other character than base64's, or `=` anywhere but at the end, fails. The field is read
    /// once: the closing colon is found first and the decoder checks each character as it decodes it.
    private mutating func parseByteSequence() throws(StructuredFieldError) -> [UInt8] {
        position += 1  // ":"
        let start = position
        while let byte = current, byte != StructuredFieldGrammar.colon { position += 1 }
        guard current == StructuredFieldGrammar.colon else {
            position = firstNonBase64(in: start..<position) ?? position
            throw failure(.invalidByteSequence)
        }
        var end = position
        position += 1
        var padding = 0
        while end > start && bytes[end - 1] == StructuredFieldGrammar.equals && padding < 2 {
            end -= 1
            padding += 1
        }
        guard let decoded = StructuredFieldBase64.decode(UnsafeBufferPointer(rebasing: bytes[start..<end])) else {
            position = firstNonBase64(in: start..<position - 1) ?? start
            throw failure(.invalidByteSequence)
        }
        return decoded
    }

    /// The offset of the first byte in `range` that is neither a base64 character nor `=`: where a byte
    /// sequence that does not decode is reported, when it has such a byte.
    private func firstNonBase64(in range: Range<Int>) -> Int? {
        range.first { !StructuredFieldGrammar.isBase64Character(bytes[$0]) }
    }

    /// §4.2.8 Parsing a Boolean.
    private mutating func parseBoolean() throws(StructuredFieldError) -> Bool {
        position += 1  // "?"
        guard let byte = current else { throw failure(.invalidBoolean) }
        guard byte == StructuredFieldGrammar.zero || byte == StructuredFieldGrammar.one else {
            throw failure(.invalidBoolean)
        }
        position += 1
        return byte == StructuredFieldGrammar.one
    }

    /// §4.2.9 Parsing a Date.
    private mutating func parseDate() throws(StructuredFieldError) -> Int64 {
        position += 1  // "@"
        let start = position
        let number: StructuredFieldBareItem
        do throws(StructuredFieldError) {
            number = try parseIntegerOrDecimal()
        } catch {
            throw StructuredFieldError(.invalidDate, offset: error.offset)
        }
        guard case .integer(let seconds) = number else { throw StructuredFieldError(.invalidDate, offset: start) }
        return seconds
    }

    /// §4.2.10 Parsing a Display String.
    private mutating func parseDisplayString() throws(StructuredFieldError) -> String {
        position += 1  // "%"
        guard current == StructuredFieldGrammar.quote else { throw failure(.invalidDisplayString) }
        position += 1
        var octets: [UInt8] = []
        while let byte = current {
            guard byte >= 0x20 && byte <= 0x7E else { throw failure(.invalidDisplayString) }
            position += 1
            if byte == StructuredFieldGrammar.percent {
                guard position + 1 < bytes.count, let high = StructuredFieldGrammar.lowercaseHexValue(bytes[position]),
                    let low = StructuredFieldGrammar.lowercaseHexValue(bytes[position + 1])
                else { throw failure(.invalidDisplayString) }
                position += 2
                octets.append(high << 4 | low)
            } else if byte == StructuredFieldGrammar.quote {
                let text = String(decoding: octets, as: UTF8.self)
                guard text.utf8.elementsEqual(octets) else { throw failure(.invalidDisplayString) }
                return text
            } else {
                octets.append(byte)
            }
        }
        throw failure(.invalidDisplayString)
    }
}

/// Short ASCII strings built in the standard library's inline form, without a call into it.
///
/// On 64-bit little-endian platforms a `String` of up to 15 UTF-8 bytes keeps them inside its own two words:
/// bytes 0–7 in the first, bytes 8–14 in the low seven bytes of the second, whose top byte is `0xE0` (an
/// immortal, small, ASCII string) plus the count. Writing those words takes a few instructions per byte where
/// `String(unsafeUninitializedCapacity:initializingUTF8With:)` takes about 90 per string (a closure call and
/// a UTF-8 validation). Whether this layout holds is checked once per process against strings the standard
/// library built itself (``isAvailable``); where it does not, the parser builds every string the standard
/// way.
enum StructuredFieldInlineText {
    /// The most bytes an inline string holds.
    static let capacity = 15

    /// Whether ``string(ascii:count:readable:)`` builds exactly the strings the standard library builds: true when
    /// the words it writes for sample strings of every length from 0 to 15 equal the words of the same
    /// strings built by `String(decoding:as:)`.
    static let isAvailable: Bool = {
        #if arch(x86_64) || arch(arm64)
        let sample = Array("abcdefghijklmnop".utf8)
        return sample.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return (0...capacity).allSatisfy { count in
                let expected = words(of: String(decoding: buffer.prefix(count), as: UTF8.self))
                return expected == words(ascii: base, count: count, readable: count)
                    && expected == words(ascii: base, count: count, readable: buffer.count)
            }
        }
        #else
        return false
        #endif
    }()

    #if arch(x86_64) || arch(arm64)
    /// The two words of `text`.
    private static func words(of text: String) -> (UInt64, UInt64) {
        unsafeBitCast(text, to: (UInt64, UInt64).self)
    }

    /// The two words of the inline string of the `count` ASCII bytes at `source`, of which `readable` (at
    /// least `count`) may be read: with two 8-byte loads when 16 may be, else byte by byte.
    @inline(__always)
    private static func words(ascii source: UnsafePointer<UInt8>, count: Int, readable: Int) -> (UInt64, UInt64) {
        let discriminator = (0xE0 | UInt64(truncatingIfNeeded: count)) &<< 56
        if readable >= 16 {
            let raw = UnsafeRawPointer(source)
            let leading = raw.loadUnaligned(as: UInt64.self).littleEndian
            let trailing = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
            if count <= 8 { return (leading & lowBytesMask(count), discriminator) }
            return (leading, trailing & lowBytesMask(count &- 8) | discriminator)
        }
        var leading: UInt64 = 0
        var trailing: UInt64 = 0
        var index = 0
        while index < count && index < 8 {
            leading |= UInt64(source[index]) &<< UInt64(index &* 8)
            index &+= 1
        }
        while index < count {
            trailing |= UInt64(source[index]) &<< UInt64((index &- 8) &* 8)
            index &+= 1
        }
        return (leading, trailing | discriminator)
    }

    /// A mask of the low `count` (0 to 8) bytes of a word.
    @inline(__always)
    private static func lowBytesMask(_ count: Int) -> UInt64 {
        count >= 8 ? .max : (1 &<< UInt64(truncatingIfNeeded: count &* 8)) &- 1
    }
    #endif

    /// The string of the `count` (at most ``capacity``) ASCII bytes at `source`, of which `readable` (at
    /// least `count`) may be read. Only called when ``isAvailable`` is true.
    @inline(__always)
    static func string(ascii source: UnsafePointer<UInt8>, count: Int, readable: Int) -> String {
        #if arch(x86_64) || arch(arm64)
        return unsafeBitCast(words(ascii: source, count: count, readable: readable), to: String.self)
        #else
        return String(decoding: UnsafeBufferPointer(start: source, count: count), as: UTF8.self)
        #endif
    }
}

/// The ASCII bytes and character classes of RFC 9651's grammar.
enum StructuredFieldGrammar {
    static let tab: UInt8 = 0x09
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let percent: UInt8 = 0x25
    static let openParenthesis: UInt8 = 0x28
    static let closeParenthesis: UInt8 = 0x29
    static let star: UInt8 = 0x2A
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let one: UInt8 = 0x31
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let equals: UInt8 = 0x3D
    static let question: UInt8 = 0x3F
    static let at: UInt8 = 0x40
    static let upperA: UInt8 = 0x41
    static let upperZ: UInt8 = 0x5A
    static let backslash: UInt8 = 0x5C
    static let lowerA: UInt8 = 0x61
    static let lowerZ: UInt8 = 0x7A

    static func isDigit(_ byte: UInt8) -> Bool { byte >= zero && byte <= nine }
    static func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= lowerA && byte <= lowerZ }
    static func isLetter(_ byte: UInt8) -> Bool { isLowercaseLetter(byte) || (byte >= upperA && byte <= upperZ) }

    /// lcalpha / DIGIT / "_" / "-" / "." / "*"
    static func isKeyCharacter(_ byte: UInt8) -> Bool {
        // Bit n of the first mask is ASCII n ("*", "-", ".", "0"–"9"); of the second, ASCII 64 + n ("_",
        // "a"–"z").
        isInSet(byte, 0x03FF_6400_0000_0000, 0x07FF_FFFE_8000_0000)
    }

    /// RFC 9110 tchar, plus ":" and "/".
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        // Bit n of the first mask is ASCII n ("!", "#"–"'", "*", "+", "-"–":"); of the second, ASCII 64 + n
        // ("A"–"Z", "^"–"z", "|", "~").
        isInSet(byte, 0x07FF_ECFA_0000_0000, 0x57FF_FFFF_C7FF_FFFE)
    }

    /// Whether `byte` is ASCII and its bit is set in `low` (bytes 0–63) or `high` (bytes 64–127).
    @inline(__always)
    private static func isInSet(_ byte: UInt8, _ low: UInt64, _ high: UInt64) -> Bool {
        byte < 128 && ((byte < 64 ? low : high) >> UInt64(byte & 63)) & 1 != 0
    }

    static func isBase64Character(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == 0x2B || byte == 0x2F || byte == equals
    }

    static func lowercaseHexValue(_ byte: UInt8) -> UInt8? {
        if isDigit(byte) { return byte - zero }
        if byte >= lowerA && byte <= 0x66 { return byte - lowerA + 10 }
        return nil
    }
}

/// Base64 (RFC 4648 §4) for byte sequences: encoding with padding, decoding without it.
enum StructuredFieldBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The six bits `byte` stands for, or `invalid` for a byte outside the alphabet.
    @inline(__always)
    private static func sextet(_ byte: UInt8) -> UInt32 {
        switch byte {
        case StructuredFieldGrammar.upperA...StructuredFieldGrammar.upperZ:
            return UInt32(byte &- StructuredFieldGrammar.upperA)
        case StructuredFieldGrammar.lowerA...StructuredFieldGrammar.lowerZ:
            return UInt32(byte &- StructuredFieldGrammar.lowerA &+ 26)
        case StructuredFieldGrammar.zero...StructuredFieldGrammar.nine:
            return UInt32(byte &- StructuredFieldGrammar.zero &+ 52)
        case 0x2B: return 62
        case 0x2F: return 63
        default: return invalid
        }
    }

    /// What ``sextet(_:)`` answers for a byte outside the alphabet: a bit no sextet has, so that one test of
    /// four characters' bits together finds it.
    private static let invalid: UInt32 = 0x100

    /// Decodes unpadded base64; pad bits in the last character are ignored. Nil for a character outside the
    /// alphabet or a length that leaves a single character over. Four characters become three bytes, written
    /// straight into the result's storage.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: count / 4 * 3 + max(count % 4 - 1, 0)) {
            buffer, initialized in
            var index = 0
            var written = 0
            while index + 4 <= count {
                let first = sextet(text[index])
                let second = sextet(text[index + 1])
                let third = sextet(text[index + 2])
                let fourth = sextet(text[index + 3])
                guard (first | second | third | fourth) & invalid == 0 else {
                    valid = false
                    break
                }
                let chunk = first << 18 | second << 12 | third << 6 | fourth
                buffer[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                buffer[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                buffer[written + 2] = UInt8(truncatingIfNeeded: chunk)
                index += 4
                written += 3
            }
            let remaining = count - index
            if valid && remaining >= 2 {
                let first = sextet(text[index])
                let second = sextet(text[index + 1])
                let third = remaining == 3 ? sextet(text[index + 2]) : 0
                if (first | second | third) & invalid != 0 {
                    valid = false
                } else {
                    let chunk = first << 18 | second << 12 | third << 6
                    buffer[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                    written += 1
                    if remaining == 3 {
                        buffer[written] = UInt8(truncatingIfNeeded: chunk >> 8)
                        written += 1
                    }
                }
            }
            initialized = valid ? written : 0
        }
        return valid ? output : nil
    }

    /// Encodes with `=` padding.
    static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(chunk >> UInt32(shift) & 63)]) }
            index += 3
        }
        let remaining = bytes.count - index
        guard remaining > 0 else { return }
        var chunk = UInt32(bytes[index]) << 16
        if remaining == 2 { chunk |= UInt32(bytes[index + 1]) << 8 }
        output.append(alphabet[Int(chunk >> 18 & 63)])
        output.append(alphabet[Int(chunk >> 12 & 63)])
        output.append(remaining == 2 ? alphabet[Int(chunk >> 6 & 63)] : StructuredFieldGrammar.equals)
        output.append(StructuredFieldGrammar.equals)
    }
}
