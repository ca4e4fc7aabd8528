import Foundation

/// Finds a feed's character encoding and converts the body to UTF-8 before parsing.
///
/// Precedence (RFC 7303 §3, XML 1.0 Appendix F): a byte-order mark; else the `charset` parameter of the
/// HTTP `Content-Type`; else the byte pattern of a BOM-less UTF-16/UTF-32 document; else the `encoding` of
/// the XML declaration (unless it names UTF-16 or UTF-32, which a declaration written in single bytes cannot
/// be); else UTF-8. Any encoding the platform converts is accepted (the IANA names and
/// aliases in ``encodingsByName``); a body that is not valid in a merely *assumed* UTF-8 is read as
/// Windows-1252, with a warning, as feed readers do.
enum FeedCharset {
    /// The body as UTF-8 with its XML declaration's `encoding` removed, and what was decided.
    struct Decoded {
        var data: Data
        var encodingName: String
        var warnings: [FeedWarning] = []
    }

    static func decode(_ data: Data, contentType: String?) throws -> Decoded {
        let head = Array(data.prefix(4))
        if let (name, encoding, bomLength) = byteOrderMark(head) {
            return try convert(data.dropFirst(bomLength), name: name, encoding: encoding)
        }
        if let label = contentType.flatMap(charsetParameter) {
            return try convert(data, label: label, source: "Content-Type")
        }
        if let (name, encoding) = bomlessUnicode(head) {
            return try convert(data, name: name, encoding: encoding)
        }
        if head == ebcdicDeclarationStart {
            // `<?xm` in EBCDIC: the declaration is read in code page 037 (its ASCII-range letters are those
            // of every EBCDIC Latin code page) to learn which one the document declares.
            let prefix = SingleByteCodePage.ebcdicUS.decode(data.prefix(256)).map { Data($0.utf8) }
            guard let label = prefix.flatMap(declaredEncoding) else {
                throw FeedError(.unsupportedEncoding, detail: "an EBCDIC document without a declared encoding")
            }
            return try convert(data, label: label, source: "XML declaration")
        }
        if let label = declaredEncoding(data) {
            // The declaration was just read one byte per character: a UTF-16 or UTF-32 it names (as .NET
            // writes into a string that is then sent as UTF-8) cannot be the body's encoding.
            let key = label.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
            if let encoding = encodingsByName[key], isWide(encoding) {
                return try convert(data, name: "UTF-8", encoding: .utf8, assumed: true)
            }
            return try convert(data, label: label, source: "XML declaration")
        }
        return try convert(data, name: "UTF-8", encoding: .utf8, assumed: true)
    }

    private static func convert(_ data: Data, label: String, source: String) throws -> Decoded {
        let key = label.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
        // `windows_1252`, `cp_is`: underscores stand for hyphens in the labels feeds write.
        let hyphenated = key.replacingOccurrences(of: "_", with: "-")
        let encoding = encodingsByName[key] ?? encodingsByName[hyphenated]
        // The platform's converter first; where it has none, the code page's own table.
        if let encoding, encoding == .utf8 || platformConverts(encoding) {
            return try convert(data, name: label, encoding: encoding)
        }
        if let codePage = SingleByteCodePage.byLabel[key] ?? SingleByteCodePage.byLabel[hyphenated] {
            return try convert(data, name: label, codePage: codePage)
        }
        guard let encoding else {
            throw FeedError(.unsupportedEncoding, detail: "unknown encoding \"\(label)\" (from the \(source))")
        }
        return try convert(data, name: label, encoding: encoding)
    }

    private static func convert(_ data: Data, name: String, codePage: SingleByteCodePage) throws -> Decoded {
        guard let text = codePage.decode(data) else {
            throw FeedError(.unsupportedEncoding, detail: "the body is not valid \(name)")
        }
        return Decoded(data: withoutDeclaredEncoding(text), encodingName: name)
    }

    /// Whether this platform converts `encoding` (Foundation on Linux lacks some of CoreFoundation's).
    private static func platformConverts(_ encoding: String.Encoding) -> Bool {
        String(data: Data("<".utf8), encoding: encoding) != nil || isWide(encoding)
    }

    private static func convert(
        _ data: Data, name: String, encoding: String.Encoding, assumed: Bool = false
    ) throws -> Decoded {
        if encoding == .utf8 || encoding == .ascii {
            if isValidUTF8(data) {
                // A whole `Data` is shared as it is (copy on write); only a slice (after a BOM) is copied.
                return Decoded(data: data.startIndex == 0 ? data : Data(data), encodingName: "UTF-8")
            }
            let text = windows1252(data)
            let warning = FeedWarning(
                .invalidEncoding,
                detail:
                    "\(assumed ? "no encoding declared" : "declared \(name)"), but not valid UTF-8: read as windows-1252"
            )
            return Decoded(data: withoutDeclaredEncoding(text), encodingName: "windows-1252", warnings: [warning])
        }
        guard platformConverts(encoding) else {
            throw FeedError(.unsupportedEncoding, detail: "this platform cannot convert \(name)")
        }
        guard let text = String(data: data, encoding: encoding) else {
            throw FeedError(.unsupportedEncoding, detail: "the body is not valid \(name)")
        }
        return Decoded(data: withoutDeclaredEncoding(text), encodingName: name)
    }

    /// `data` read as Windows-1252, as WHATWG defines it, with the five bytes it leaves undefined (0x81, 0x8D,
    /// 0x8F, 0x90, 0x9D) read as U+FFFD: never fails, unlike the platform's converter, which refuses them.
    static func windows1252(_ data: Data) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(data.count + data.count / 4)
        for byte in data {
            if byte < 0x80 {
                utf8.append(byte)
                continue
            }
            let scalar: Unicode.Scalar =
                byte < 0xA0 ? HTMLEntities.windows1252C1[Int(byte - 0x80)] ?? "\u{FFFD}" : Unicode.Scalar(byte)
            if let encoded = UTF8.encode(scalar) { utf8.append(contentsOf: encoded) }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    private static func isWide(_ encoding: String.Encoding) -> Bool {
        [.utf16, .utf16BigEndian, .utf16LittleEndian, .utf32, .utf32BigEndian, .utf32LittleEndian].contains(encoding)
    }

    private static func isValidUTF8(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let firstNonASCII = firstNonASCII(raw) else { return true }
            var iterator = UnsafeBufferPointer(rebasing: bytes[firstNonASCII...]).makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }

    /// The offset of the first byte ≥ 0x80. Speed: eight bytes per step (an unaligned 64-bit load, always
    /// within `raw`), then byte by byte for the tail and to find the exact byte.
    private static func firstNonASCII(_ raw: UnsafeRawBufferPointer) -> Int? {
        var offset = 0
        while offset + 8 <= raw.count {
            if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            offset += 8
        }
        while offset < raw.count {
            if raw[offset] >= 0x80 { return offset }
            offset += 1
        }
        return nil
    }

    /// `text` as UTF-8 with the XML declaration's `encoding="…"` pseudo-attribute removed (the bytes are
    /// UTF-8 now, whatever it said).
    private static func withoutDeclaredEncoding(_ text: String) -> Data {
        var data = Data(text.utf8)
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { data.removeFirst(3) }
        guard data.starts(with: Array("<?xml".utf8)),
            let close = declarationEnd(data, within: 512)
        else { return data }
        let declaration = Array(data[..<close.lowerBound])
        guard let (attribute, _) = encodingAttribute(declaration) else { return data }
        var start = attribute.lowerBound
        while start > 0, isSpace(declaration[start - 1]) { start -= 1 }
        return Data(declaration[..<start]) + Data(declaration[attribute.upperBound...]) + data[close.lowerBound...]
    }

    /// The range of the first `?>` in the first `limit` bytes of `data`.
    private static func declarationEnd(_ data: Data, within limit: Int) -> Range<Data.Index>? {
        var index = data.startIndex
        let end = data.index(data.startIndex, offsetBy: min(limit, data.count)) - 1
        while index < end {
            if data[index] == UInt8(ascii: "?"), data[index + 1] == UInt8(ascii: ">") { return index..<(index + 2) }
            index += 1
        }
        return nil
    }

    /// The range of `encoding = "value"` in an XML declaration's bytes, and the value's range.
    private static func encodingAttribute(_ declaration: [UInt8]) -> (Range<Int>, Range<Int>)? {
        let name = Array("encoding".utf8)
        var index = 0
        while index + name.count <= declaration.count {
            guard declaration[index..<(index + name.count)].elementsEqual(name) else {
                index += 1
                continue
            }
            var cursor = index + name.count
            while cursor < declaration.count, isSpace(declaration[cursor]) { cursor += 1 }
            guard cursor < declaration.count, declaration[cursor] == UInt8(ascii: "=") else {
                index += 1
                continue
            }
            cursor += 1
            while cursor < declaration.count, isSpace(declaration[cursor]) { cursor += 1 }
            guard cursor < declaration.count, declaration[cursor] == 0x22 || declaration[cursor] == 0x27,
                let close = declaration[(cursor + 1)...].firstIndex(of: declaration[cursor])
            else {
                index += 1
                continue
            }
            return (index..<(close + 1), (cursor + 1)..<close)
        }
        return nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func byteOrderMark(_ head: [UInt8]) -> (String, String.Encoding, Int)? {
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { return ("UTF-8", .utf8, 3) }
        if head.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return ("UTF-32BE", .utf32BigEndian, 4) }
        if head.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return ("UTF-32LE", .utf32LittleEndian, 4) }
        if head.starts(with: [0xFE, 0xFF]) { return ("UTF-16BE", .utf16BigEndian, 2) }
        if head.starts(with: [0xFF, 0xFE]) { return ("UTF-16LE", .utf16LittleEndian, 2) }
        return nil
    }

    private static func bomlessUnicode(_ head: [UInt8]) -> (String, String.Encoding)? {
        switch head {
        case [0x00, 0x00, 0x00, 0x3C]: ("UTF-32BE", .utf32BigEndian)
        case [0x3C, 0x00, 0x00, 0x00]: ("UTF-32LE", .utf32LittleEndian)
        case [0x00, 0x3C, 0x00, 0x3F]: ("UTF-16BE", .utf16BigEndian)
        case [0x3C, 0x00, 0x3F, 0x00]: ("UTF-16LE", .utf16LittleEndian)
        default: nil
        }
    }

    /// The `charset` parameter of a media type (`application/rss+xml; charset="koi8-r"`).
    static func charsetParameter(_ contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            let value = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The `encoding` of an ASCII-compatible XML declaration, if any.
    static func declaredEncoding(_ data: Data) -> String? {
        guard data.starts(with: Array("<?xml".utf8)) else { return nil }
        guard let end = declarationEnd(data, within: 256) else { return nil }
        let declaration = Array(data[..<end.lowerBound])
        guard let (_, value) = encodingAttribute(declaration), !value.isEmpty else { return nil }
        return String(decoding: declaration[value], as: UTF8.self)
    }

    private static func core(_ value: UInt32) -> String.Encoding {
        String.Encoding(rawValue: UInt(0x8000_0000 | value))
    }

    /// `<?xm` in EBCDIC (XML 1.0 Appendix F).
    private static let ebcdicDeclarationStart: [UInt8] = [0x4C, 0x6F, 0xA7, 0x94]

    /// IANA charset names and common aliases (lower case) → the platform's encoding.
    static let encodingsByName: [String: String.Encoding] = {
        var table: [String: String.Encoding] = [:]
        func add(_ names: [String], _ encoding: String.Encoding) { for name in names { table[name] = encoding } }
        add(["utf-8", "utf8", "unicode-1-1-utf-8"], .utf8)
        add(["us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us"], .utf8)
        add(["utf-16", "utf16"], .utf16)
        add(["utf-16be"], .utf16BigEndian)
        add(["utf-16le"], .utf16LittleEndian)
        add(["utf-32", "utf32"], .utf32)
        add(["utf-32be"], .utf32BigEndian)
        add(["utf-32le"], .utf32LittleEndian)
        add(["iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1", "cp819", "ibm819"], .isoLatin1)
        let iso: [(Int, UInt32)] = [
            (2, 0x202), (3, 0x203), (4, 0x204), (5, 0x205), (6, 0x206), (7, 0x207), (8, 0x208), (9, 0x209),
            (10, 0x20A), (11, 0x20B), (13, 0x20D), (14, 0x20E), (15, 0x20F), (16, 0x210),
        ]
        for (number, value) in iso {
            add(["iso-8859-\(number)", "iso8859-\(number)", "iso_8859-\(number)"], core(value))
        }
        add(["latin2", "l2"], core(0x202))
        add(["latin9", "l9"], core(0x20F))
        add(["windows-874", "cp874", "tis-620"], core(0x41D))
        let windows: [(String, UInt32)] = [
            ("1252", 0x500), ("1250", 0x501), ("1251", 0x502), ("1253", 0x503), ("1254", 0x504), ("1255", 0x505),
            ("1256", 0x506), ("1257", 0x507), ("1258", 0x508),
        ]
        for (number, value) in windows { add(["windows-\(number)", "cp\(number)", "x-cp\(number)"], core(value)) }
        // Microsoft's own names for its code pages, as Python's codecs know them.
        let microsoft: [(String, UInt32)] = [
            ("ms-ansi", 0x500), ("ms-ee", 0x501), ("ms-cyrl", 0x502), ("ms-greek", 0x503), ("ms-turk", 0x504),
            ("ms-hebr", 0x505), ("ms-arab", 0x506), ("winbaltrim", 0x507),
        ]
        for (name, value) in microsoft { add([name], core(value)) }
        let dos: [(String, UInt32)] = [
            ("437", 0x400), ("737", 0x405), ("775", 0x406), ("850", 0x410), ("851", 0x411), ("852", 0x412),
            ("855", 0x413), ("857", 0x414), ("860", 0x415), ("861", 0x416), ("862", 0x417), ("863", 0x418),
            ("864", 0x419), ("865", 0x41A), ("866", 0x41B), ("869", 0x41C),
        ]
        for (number, value) in dos {
            add(
                ["ibm\(number)", "cp\(number)", "ibm-\(number)", "\(number)", "csibm\(number)", "cspc\(number)"],
                core(value))
        }
        add(["cp437", "cspc8codepage437"], core(0x400))
        add(["cspc775baltic"], core(0x406))
        add(["cspc850multilingual"], core(0x410))
        add(["cspcp852"], core(0x412))
        add(["cp-is"], core(0x416))
        add(["cspc862latinhebrew"], core(0x417))
        // EBCDIC and the Mac Icelandic, Croatian, Romanian and Arabic code pages are decoded from
        // ``SingleByteCodePage`` tables: CoreFoundation on Linux lacks EBCDIC other than 037 and converts only
        // the ASCII half of those Mac code pages.
        // CoreFoundation's Mac Roman: `String.Encoding.macOSRoman` decodes Mac Roman wrongly on Linux.
        add(["macintosh", "mac", "x-mac-roman", "macroman", "csmacintosh"], core(0))
        add(["x-mac-greek", "macgreek"], core(6))
        add(["x-mac-turkish", "macturkish"], core(35))
        add(["x-mac-cyrillic", "maccyrillic", "mac-cyrillic", "x-mac-ukrainian"], core(7))
        add(["x-mac-centraleurroman", "x-mac-ce", "maccentraleurope", "maclatin2"], core(29))
        add(["x-mac-hebrew"], core(5))
        add(["koi8-r", "koi8r", "cskoi8r"], core(0xA02))
        add(["koi8-u", "koi8u"], core(0xA08))
        add(["shift_jis", "shift-jis", "sjis", "ms_kanji", "csshiftjis", "windows-31j", "cp932"], .shiftJIS)
        add(["euc-jp", "eucjp", "cseucpkdfmtjapanese"], .japaneseEUC)
        add(["iso-2022-jp", "csiso2022jp"], .iso2022JP)
        add(["gb2312", "euc-cn", "csgb2312"], core(0x930))
        add(["gbk", "cp936", "x-gbk"], core(0x631))
        add(["gb18030"], core(0x632))
        add(["big5", "csbig5", "x-x-big5", "big5-hkscs"], core(0xA03))
        add(["euc-kr", "euckr", "cseuckr", "ks_c_5601-1987", "cp949"], core(0x940))
        return table
    }()
}

/// A single-byte code page decoded from its own 256-entry table, for the encodings the platform has no
/// converter for (the tables are generated from CPython's codecs by `Scripts/feeds/generate_codepages.py`).
struct SingleByteCodePage: Sendable {
    /// The code page's canonical name (CPython's).
    let name: String
    /// The labels that name it (lower case, hyphens for underscores).
    let labels: [String]
    /// The Unicode scalar of each byte; ``undefined`` for a byte the code page leaves undefined.
    let scalars: [UInt16]

    /// The table entry of a byte the code page does not define.
    static let undefined: UInt16 = 0xFFFE

    /// Every code page in ``all`` under each of its labels.
    static let byLabel: [String: SingleByteCodePage] = {
        var table: [String: SingleByteCodePage] = [:]
        for codePage in all { for label in codePage.labels { table[label] = codePage } }
        return table
    }()

    /// EBCDIC code page 037 (US/Canada): its ASCII-range letters and punctuation are those of every EBCDIC
    /// Latin code page, so it reads an EBCDIC document's XML declaration.
    static let ebcdicUS: SingleByteCodePage = byLabel["cp037"]!

    /// `bytes` as text, or nil when a byte is undefined in this code page.
    func decode(_ bytes: some Collection<UInt8>) -> String? {
        var text = String.UnicodeScalarView()
        for byte in bytes {
            let value = scalars[Int(byte)]
            guard value != Self.undefined, let scalar = Unicode.Scalar(value) else { return nil }
            text.append(scalar)
        }
        return String(text)
    }
}
