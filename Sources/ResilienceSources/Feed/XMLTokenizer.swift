/// A pull-style, well-formedness-checking XML 1.0 tokenizer over UTF-8 bytes: the XML that feeds need,
/// without Foundation's `XMLParser`.
///
/// Each call to ``next()`` scans one construct and returns an ``Event``; names and text are byte ranges into
/// the input, decoded only when the caller asks (``string(_:)``, ``text(_:)``, ``attributeValue(_:)``), so
/// text nobody reads costs one scan and no allocation. It is a loop over a small state (the position, the
/// stack of open element names): no recursion, so nesting depth costs heap, never stack.
///
/// Checked: names, attribute syntax (both quote styles, whitespace around `=`, whitespace between
/// attributes, no `<` in a value, no duplicate attribute), matching end tags, one root element and nothing
/// but comments, processing instructions and whitespace around it, comment and CDATA syntax, `]]>` outside
/// CDATA, characters XML forbids (C0 controls, U+FFFE, U+FFFF) and character references to them.
///
/// Lenient, as feed readers are (and as ``FeedParser`` documents): `--` inside a comment is read past, the
/// root's end tag may lack its `>` at the very end of the document, a `&` that does not start a reference is
/// a literal ampersand (counted in ``bareAmpersands``); named references are the five of XML plus the HTML5
/// set; an unknown name, or a numeric reference to a character XML forbids, becomes a placeholder marked by
/// ``HTMLEntities/unknownStart`` and ``HTMLEntities/unknownEnd`` so the caller can say which text was lost.
/// Processing instructions (the XML declaration included) are skipped wherever they are. Of a document type
/// declaration only the internal subset's general entity declarations with a literal value are read
/// (``entities``), bounded: at most ``maximumEntities`` of them, each at most ``maximumEntityLength`` bytes once
/// the references in its value are expanded, and at most ``maximumEntityExpansion`` bytes produced by entity
/// references in the whole document, so an expansion bomb is refused with ``FeedError/Code/entityDeclaration``.
/// External entities are refused the same way and never fetched; parameter entities, element, attribute-list
/// and notation declarations, comments and processing instructions in the subset are skipped.
/// Non-ASCII name characters are accepted without checking them against XML's name-character tables.
struct XMLTokenizer {
    /// One construct of the document.
    enum Event: Equatable {
        /// A start tag (also the start of an empty-element tag); its name is ``elementName``, its attributes
        /// ``attributes``.
        case startElement
        /// An end tag, or the end of an empty-element tag: the element ``elementName`` closes.
        case endElement
        /// Character data (entity references still encoded; read it with ``text(_:)``).
        case text(Range<Int>)
        /// A CDATA section's content (read it with ``text(_:)``: nothing to decode but line ends).
        case cdata(Range<Int>)
        /// The document ended well-formed.
        case endOfDocument
    }

    /// An attribute of the current start tag: byte ranges of its name and of its (undecoded) value.
    struct Attribute {
        var name: Range<Int>
        var value: Range<Int>
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// The names of the open elements, as byte ranges.
    private var open: [Range<Int>] = []
    private var pendingEnd = false
    private var sawRoot = false
    private var rootClosed = false
    private var sawDoctype = false
    /// The attribute names of a start tag with many attributes.
    private var manyNames: Set<String> = []
    /// The internal general entities the document type declaration declared, name → replacement text (the
    /// references in each value already expanded).
    private(set) var entities: [String: [UInt8]] = [:]
    /// How many bytes references to ``entities`` have produced so far.
    private var expandedBytes = 0

    /// The most entity declarations a document may make.
    static let maximumEntities = 256
    /// The longest replacement text of one entity, in bytes.
    static let maximumEntityLength = 16 * 1024
    /// The most bytes entity references may produce in one document.
    static let maximumEntityExpansion = 1024 * 1024

    /// The name of the element the last start or end event concerns.
    private(set) var elementName: Range<Int> = 0..<0
    /// The attributes of the last start tag.
    private(set) var attributes: [Attribute] = []
    /// How many `&` were read as literal ampersands.
    private(set) var bareAmpersands = 0
    /// How many elements are open.
    var depth: Int { open.count }

    /// A tokenizer over `bytes`, which must be valid UTF-8 and outlive the tokenizer.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        attributes.reserveCapacity(8)
    }

    /// The line (1-based) of the current position, for error messages.
    var line: Int {
        var count = 1
        for index in 0..<min(position, bytes.count) where bytes[index] == 0x0A { count += 1 }
        return count
    }

    // MARK: Events

    /// The next event; throws ``FeedError`` where the document stops being well-formed.
    mutating func next() throws(FeedError) -> Event {
        if pendingEnd {
            pendingEnd = false
            return closeElement()
        }
        while true {
            guard position < bytes.count else { return try endOfInput() }
            if bytes[position] != ascii("<") {
                let start = position
                let hasText = try scanText()
                if open.isEmpty {
                    if hasText {
                        throw fail(
                            .malformedXML,
                            sawRoot ? "content after the root element" : "content before the root element")
                    }
                    continue
                }
                return .text(start..<position)
            }
            guard position + 1 < bytes.count else { throw truncated() }
            switch bytes[position + 1] {
            case ascii("/"): return try endTag()
            case ascii("?"): try skipProcessingInstruction()
            case ascii("!"):
                if let event = try markupDeclaration() { return event }
            default: return try startTag()
            }
        }
    }

    private mutating func endOfInput() throws(FeedError) -> Event {
        if !open.isEmpty { throw truncated() }
        guard sawRoot else { throw fail(.malformedXML, "no root element") }
        return .endOfDocument
    }

    private mutating func closeElement() -> Event {
        elementName = open.removeLast()
        if open.isEmpty { rootClosed = true }
        return .endElement
    }

    // MARK: Tags

    private mutating func startTag() throws(FeedError) -> Event {
        if rootClosed { throw fail(.malformedXML, "a second root element") }
        position += 1
        let name = try scanName()
        attributes.removeAll(keepingCapacity: true)
        if !manyNames.isEmpty { manyNames.removeAll() }
        while true {
            let hadSpace = skipWhitespace()
            guard position < bytes.count else { throw truncated() }
            let byte = bytes[position]
            if byte == ascii(">") {
                position += 1
                break
            }
            if byte == ascii("/") {
                guard position + 1 < bytes.count else { throw truncated() }
                guard bytes[position + 1] == ascii(">") else { throw fail(.malformedXML, "expected /> in a tag") }
                position += 2
                pendingEnd = true
                break
            }
            guard hadSpace else { throw fail(.malformedXML, "attributes must be separated by whitespace") }
            try attribute()
        }
        sawRoot = true
        open.append(name)
        elementName = name
        return .startElement
    }

    private mutating func attribute() throws(FeedError) {
        let name = try scanName()
        skipWhitespace()
        guard position < bytes.count else { throw truncated() }
        guard bytes[position] == ascii("=") else { throw fail(.malformedXML, "attribute without a value") }
        position += 1
        skipWhitespace()
        guard position < bytes.count else { throw truncated() }
        let quote = bytes[position]
        guard quote == ascii("\"") || quote == ascii("'") else {
            throw fail(.malformedXML, "attribute value without quotes")
        }
        position += 1
        let start = position
        while true {
            guard position < bytes.count else { throw truncated() }
            let byte = bytes[position]
            if byte == quote { break }
            switch byte {
            case ascii("<"): throw fail(.malformedXML, "< in an attribute value")
            case ascii("&"): try reference()
            default: try character(byte)
            }
        }
        let value = start..<position
        position += 1
        if attributes.count < 16 {
            for other in attributes where same(other.name, name) {
                throw fail(.malformedXML, "duplicate attribute \(string(name))")
            }
        } else {
            // Many attributes: a set keeps the duplicate check linear.
            if attributes.count == 16 { for other in attributes { manyNames.insert(string(other.name)) } }
            guard manyNames.insert(string(name)).inserted else {
                throw fail(.malformedXML, "duplicate attribute \(string(name))")
            }
        }
        attributes.append(Attribute(name: name, value: value))
    }

    private mutating func endTag() throws(FeedError) -> Event {
        position += 2
        // The root's end tag cut short by the end of the document (`…</rss`, perhaps with whitespace after
        // the name): closed, as feed readers do.
        if open.count == 1, let root = open.last, bytes.count - position >= root.count,
            same(root, position..<(position + root.count)),
            bytes[(position + root.count)...].allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 })
        {
            position = bytes.count
            return closeElement()
        }
        let name = try scanName()
        skipWhitespace()
        guard position < bytes.count else { throw truncated() }
        guard bytes[position] == ascii(">") else { throw fail(.malformedXML, "expected > after </\(string(name))") }
        position += 1
        guard let top = open.last else { throw fail(.unbalancedElements, "</\(string(name))> closes nothing") }
        guard same(top, name) else {
            throw fail(.unbalancedElements, "</\(string(name))> does not close <\(string(top))>")
        }
        return closeElement()
    }

    private mutating func scanName() throws(FeedError) -> Range<Int> {
        let start = position
        guard position < bytes.count else { throw truncated() }
        guard Self.isNameStart(bytes[position]) else { throw fail(.malformedXML, "a name was expected") }
        position += 1
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        guard position < bytes.count else { throw truncated() }
        return start..<position
    }

    // MARK: Text

    /// Scans character data up to the next `<`; true when it is more than whitespace.
    private mutating func scanText() throws(FeedError) -> Bool {
        var significant = false
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case ascii("<"): return significant
            case ascii("&"):
                significant = true
                try reference()
            case ascii("]"):
                significant = true
                if position + 2 < bytes.count, bytes[position + 1] == ascii("]"), bytes[position + 2] == ascii(">") {
                    throw fail(.malformedXML, "]]> outside a CDATA section")
                }
                position += 1
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default:
                significant = true
                try character(byte)
            }
        }
        return significant
    }

    /// Checks the character starting with `byte` at `position` and steps over it (one byte: the rest of a
    /// multi-byte sequence is checked as it comes).
    private mutating func character(_ byte: UInt8) throws(FeedError) {
        if byte < 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D {
            throw fail(.invalidCharacter, "control character 0x\(String(byte, radix: 16)) XML forbids")
        }
        if byte == 0xEF, position + 2 < bytes.count, bytes[position + 1] == 0xBF, bytes[position + 2] >= 0xBE {
            throw fail(.invalidCharacter, "U+FFF\(bytes[position + 2] == 0xBE ? "E" : "F") XML forbids")
        }
        position += 1
    }

    /// Steps over a reference (or a bare `&`) at `position`.
    private mutating func reference() throws(FeedError) {
        switch HTMLEntities.scanReference(bytes, at: position) {
        case .valid(_, let end), .invalidNumeric(_, let end): position = end
        case .named(let name, let end):
            if !entities.isEmpty, let value = entities[string(name)] {
                expandedBytes += value.count
                if expandedBytes > Self.maximumEntityExpansion {
                    throw fail(
                        .entityDeclaration, "entity references expand beyond \(Self.maximumEntityExpansion) bytes")
                }
            }
            position = end
        case .bare:
            bareAmpersands += 1
            position += 1
        }
    }

    // MARK: Markup declarations, comments, CDATA, processing instructions

    private mutating func markupDeclaration() throws(FeedError) -> Event? {
        if hasPrefix("<!--") {
            try skipComment()
            return nil
        }
        if hasPrefix("<![CDATA[") {
            guard !open.isEmpty else { throw fail(.malformedXML, "CDATA outside the root element") }
            let start = position + 9
            guard let end = find("]]>", from: start) else { throw truncated() }
            position = start
            while position < end { try character(bytes[position]) }
            position = end + 3
            return .cdata(start..<end)
        }
        if hasPrefix("<!DOCTYPE") {
            guard !sawRoot, !sawDoctype else { throw fail(.malformedXML, "a document type declaration out of place") }
            sawDoctype = true
            try readDoctype()
            return nil
        }
        guard position + 2 < bytes.count else { throw truncated() }
        throw fail(.malformedXML, "unknown markup declaration")
    }

    private mutating func skipComment() throws(FeedError) {
        position += 4
        while true {
            guard position + 1 < bytes.count else { throw truncated() }
            let byte = bytes[position]
            // `--` inside a comment is tolerated (XML forbids it; feed readers, like browsers, read past it).
            if byte == ascii("-"), bytes[position + 1] == ascii("-"), position + 2 < bytes.count,
                bytes[position + 2] == ascii(">")
            {
                position += 3
                return
            }
            try character(byte)
        }
    }

    private mutating func skipProcessingInstruction() throws(FeedError) {
        guard let end = find("?>", from: position + 2) else { throw truncated() }
        position += 2
        while position < end { try character(bytes[position]) }
        position = end + 2
    }

    /// Reads `<!DOCTYPE …>`: quoted literals are skipped, and in the internal subset general entity
    /// declarations are kept while comments, processing instructions and other declarations are skipped.
    private mutating func readDoctype() throws(FeedError) {
        position += 9
        var inSubset = false
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case ascii("\""), ascii("'"): try skipQuotedLiteral(byte)
            case ascii("["):
                inSubset = true
                position += 1
            case ascii("]"):
                inSubset = false
                position += 1
            case ascii("<") where inSubset && hasPrefix("<!--"):
                try skipComment()
            case ascii("<") where inSubset && hasPrefix("<?"):
                try skipProcessingInstruction()
            case ascii("<") where inSubset && hasPrefix("<!ENTITY"):
                try entityDeclaration()
            case ascii("<") where inSubset && hasCaseInsensitivePrefix("<!ENTITY"):
                throw fail(.entityDeclaration, "a malformed entity declaration")
            case ascii(">") where !inSubset:
                position += 1
                return
            default: try character(byte)
            }
        }
        throw truncated()
    }

    /// Reads `<!ENTITY name "value">` into ``entities`` (the first declaration of a name binds, as XML says);
    /// skips a parameter entity declaration; refuses an external entity and anything past the limits.
    private mutating func entityDeclaration() throws(FeedError) {
        position += 8
        guard skipWhitespace(), position < bytes.count else { throw fail(.entityDeclaration, "a malformed entity") }
        if bytes[position] == ascii("%") {
            try skipDeclarationRest()
            return
        }
        let nameRange = try scanName()
        let name = string(nameRange)
        skipWhitespace()
        guard position < bytes.count else { throw truncated() }
        let quote = bytes[position]
        guard quote == ascii("\"") || quote == ascii("'") else {
            throw fail(.entityDeclaration, "external entity \(name) refused")
        }
        guard let end = find(quote, from: position + 1) else { throw truncated() }
        position += 1
        var value: [UInt8] = []
        while position < end {
            let byte = bytes[position]
            switch byte {
            case ascii("&"): position = appendDeclaredReference(at: position, to: &value)
            case ascii("%"): throw fail(.entityDeclaration, "a parameter entity reference in entity \(name)")
            default:
                try character(byte)
                value.append(byte)
            }
            if value.count > Self.maximumEntityLength {
                throw fail(.entityDeclaration, "entity \(name) expands beyond \(Self.maximumEntityLength) bytes")
            }
        }
        position = end + 1
        skipWhitespace()
        guard position < bytes.count else { throw truncated() }
        guard bytes[position] == ascii(">") else { throw fail(.entityDeclaration, "entity \(name) is not internal") }
        position += 1
        guard entities[name] == nil else { return }
        guard entities.count < Self.maximumEntities else {
            throw fail(.entityDeclaration, "more than \(Self.maximumEntities) entity declarations")
        }
        entities[name] = value
    }

    /// Appends the replacement of the reference at `index` inside an entity value: a character reference,
    /// an entity declared earlier, a predefined or HTML entity; anything else stays as written.
    private func appendDeclaredReference(at index: Int, to value: inout [UInt8]) -> Int {
        if case .named(let nameRange, let end) = HTMLEntities.scanReference(bytes, at: index),
            let declared = entities[string(nameRange)]
        {
            value.append(contentsOf: declared)
            return end
        }
        return appendReference(at: index, to: &value)
    }

    /// Steps over the literal quoted by `quote` that opens at `position`.
    private mutating func skipQuotedLiteral(_ quote: UInt8) throws(FeedError) {
        guard let end = find(quote, from: position + 1) else { throw truncated() }
        position = end + 1
    }

    /// Steps over the rest of a declaration up to its closing `>`, skipping quoted literals.
    private mutating func skipDeclarationRest() throws(FeedError) {
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case ascii("\""), ascii("'"): try skipQuotedLiteral(byte)
            case ascii(">"):
                position += 1
                return
            default: try character(byte)
            }
        }
        throw truncated()
    }

    // MARK: Decoding

    /// The bytes of `range` as a string (names, raw values).
    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// For an attribute named `xmlns`, `""`; for `xmlns:p`, `"p"`; for any other name, `nil`.
    func declaredPrefix(_ name: Range<Int>) -> String? {
        guard name.count >= 5, bytes[name.lowerBound] == ascii("x"), bytes[name.lowerBound + 1] == ascii("m"),
            bytes[name.lowerBound + 2] == ascii("l"), bytes[name.lowerBound + 3] == ascii("n"),
            bytes[name.lowerBound + 4] == ascii("s")
        else { return nil }
        if name.count == 5 { return "" }
        guard name.count > 6, bytes[name.lowerBound + 5] == ascii(":") else { return nil }
        return string((name.lowerBound + 6)..<name.upperBound)
    }

    /// The character data of `event` with references decoded and line ends normalised (CR LF and CR → LF).
    func text(_ event: Event) -> String {
        switch event {
        case .text(let range): decode(range, attribute: false)
        case .cdata(let range): decode(range, attribute: false, references: false)
        default: ""
        }
    }

    /// An attribute's value, decoded and normalised as XML says (whitespace characters become spaces).
    func attributeValue(_ attribute: Attribute) -> String { decode(attribute.value, attribute: true) }

    private func decode(_ range: Range<Int>, attribute: Bool, references: Bool = true) -> String {
        var needsWork = false
        for index in range {
            let byte = bytes[index]
            if byte == 0x0D || (references && byte == ascii("&")) || (attribute && (byte == 0x0A || byte == 0x09)) {
                needsWork = true
                break
            }
        }
        guard needsWork else { return string(range) }
        var output: [UInt8] = []
        output.reserveCapacity(range.count + 16)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            switch byte {
            case 0x0D:
                output.append(attribute ? 0x20 : 0x0A)
                index += index + 1 < range.upperBound && bytes[index + 1] == 0x0A ? 2 : 1
            case 0x0A where attribute, 0x09 where attribute:
                output.append(0x20)
                index += 1
            case ascii("&") where references:
                index = appendReference(at: index, to: &output)
            default:
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private func appendReference(at index: Int, to output: inout [UInt8]) -> Int {
        switch HTMLEntities.scanReference(bytes, at: index) {
        case .valid(let value, let end):
            if let scalar = Unicode.Scalar(value) { output.append(contentsOf: String(scalar).utf8) }
            return end
        case .named(let nameRange, let end):
            if let byte = predefined(nameRange) {
                output.append(byte)
                return end
            }
            let name = string(nameRange)
            if !entities.isEmpty, let declared = entities[name] {
                output.append(contentsOf: declared)
                return end
            }
            if let value = HTMLEntities.xmlPredefinedValues[name] ?? HTMLEntities.table[name] {
                output.append(contentsOf: value.utf8)
            } else {
                appendPlaceholder(nameRange, to: &output)
            }
            return end
        case .invalidNumeric(let textRange, let end):
            appendPlaceholder(textRange, to: &output)
            return end
        case .bare:
            output.append(ascii("&"))
            return index + 1
        }
    }

    /// The character of `&lt;`, `&gt;`, `&amp;`, `&quot;` or `&apos;`, without building a string.
    private func predefined(_ name: Range<Int>) -> UInt8? {
        let first = bytes[name.lowerBound]
        switch name.count {
        case 2 where bytes[name.lowerBound + 1] == ascii("t"):
            return first == ascii("l") ? ascii("<") : first == ascii("g") ? ascii(">") : nil
        case 3
        where first == ascii("a") && bytes[name.lowerBound + 1] == ascii("m")
            && bytes[name.lowerBound + 2] == ascii("p"):
            return ascii("&")
        case 4 where first == ascii("q") && string(name) == "quot": return ascii("\"")
        case 4 where first == ascii("a") && string(name) == "apos": return ascii("'")
        default: return nil
        }
    }

    private func appendPlaceholder(_ range: Range<Int>, to output: inout [UInt8]) {
        output.append(contentsOf: [0xEF, 0xB7, 0x90])  // U+FDD0
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
        output.append(contentsOf: [0xEF, 0xB7, 0x91])  // U+FDD1
    }

    // MARK: Helpers

    private func fail(_ code: FeedError.Code, _ detail: String) -> FeedError {
        FeedError(code, detail: detail, line: line)
    }

    private func truncated() -> FeedError {
        FeedError(
            .truncated,
            detail: "the document ends inside \(open.isEmpty ? "markup" : "<\(string(open[open.count - 1]))>")",
            line: line)
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = position
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return position > start
            }
        }
        return position > start
    }

    private func same(_ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for offset in 0..<lhs.count where bytes[lhs.lowerBound + offset] != bytes[rhs.lowerBound + offset] {
            return false
        }
        return true
    }

    private func hasPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let pointer = prefix.utf8Start
        for offset in 0..<count where bytes[position + offset] != pointer[offset] { return false }
        return true
    }

    private func hasCaseInsensitivePrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let pointer = prefix.utf8Start
        for offset in 0..<count {
            let byte = bytes[position + offset]
            let upper = (97...122).contains(byte) ? byte - 32 : byte
            if upper != pointer[offset] { return false }
        }
        return true
    }

    private func find(_ needle: StaticString, from start: Int) -> Int? {
        let count = needle.utf8CodeUnitCount
        let pointer = needle.utf8Start
        var index = start
        while index + count <= bytes.count {
            if bytes[index] == pointer[0] {
                var matched = true
                for offset in 1..<count where bytes[index + offset] != pointer[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }

    private func find(_ byte: UInt8, from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case 65...90, 97...122, ascii("_"), ascii(":"), 0x80...: true
        default: false
        }
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 65...90, 97...122, 48...57, ascii("_"), ascii(":"), ascii("-"), ascii("."), 0x80...: true
        default: false
        }
    }
}

@inline(__always)
private func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }
