import Foundation
import ResilienceCore
import Testing

/// The httpwg structured-field-tests suite (RFC 9651), vendored unchanged in
/// `Tests/Fixtures/structured-field-tests` with its licence: every parse case (and its canonical
/// serialisation) and every serialisation case.
@Suite("RFC 9651 conformance (httpwg structured-field-tests)")
struct StructuredFieldConformanceTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/structured-field-tests")

    /// How one file went.
    struct Tally: CustomStringConvertible {
        var file: String
        var total = 0
        var passed = 0
        var failures: [String] = []
        /// `can_fail` cases that were refused (allowed, and counted as passed).
        var refusedCanFail = 0

        var description: String {
            "\(file): \(passed)/\(total) passed" + (refusedCanFail > 0 ? " (\(refusedCanFail) can_fail refused)" : "")
        }

        mutating func record(_ name: String, _ problem: String?) {
            total += 1
            if let problem { failures.append("\(file) / \(name): \(problem)") } else { passed += 1 }
        }
    }

    static func files(in folder: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
            .map { folder.appendingPathComponent($0) }
    }

    static func cases(in file: URL) throws -> [ConformanceJSON] {
        guard case .array(let cases) = try ConformanceJSON.parse(Data(contentsOf: file)) else {
            throw ConformanceJSON.Failure(message: "\(file.lastPathComponent) is not an array")
        }
        return cases
    }

    @Test("Every parse case: must_fail fails, the rest parse to the expected value and serialise canonically")
    func parseCases() throws {
        let files = try Self.files(in: Self.directory)
        #expect(files.count == 20)
        var tallies: [Tally] = []
        for file in files {
            var tally = Tally(file: file.lastPathComponent)
            for testCase in try Self.cases(in: file) {
                let outcome = Self.runParseCase(testCase)
                if outcome.refusedCanFail { tally.refusedCanFail += 1 }
                tally.record(testCase["name"]?.string ?? "?", outcome.problem)
            }
            tallies.append(tally)
        }
        Self.report(tallies, kind: "parse")
    }

    @Test("Every serialisation case: must_fail cannot be serialised, the rest serialise to canonical")
    func serialisationCases() throws {
        let files = try Self.files(in: Self.directory.appendingPathComponent("serialisation-tests"))
        #expect(files.count == 4)
        var tallies: [Tally] = []
        for file in files {
            var tally = Tally(file: "serialisation-tests/" + file.lastPathComponent)
            for testCase in try Self.cases(in: file) {
                tally.record(testCase["name"]?.string ?? "?", Self.runSerialisationCase(testCase))
            }
            tallies.append(tally)
        }
        Self.report(tallies, kind: "serialisation")
    }

    static func report(_ tallies: [Tally], kind: String) {
        for tally in tallies { print("structured-field-tests \(kind): \(tally)") }
        let passed = tallies.reduce(0) { $0 + $1.passed }
        let total = tallies.reduce(0) { $0 + $1.total }
        let refused = tallies.reduce(0) { $0 + $1.refusedCanFail }
        print(
            "structured-field-tests \(kind): \(passed)/\(total) passed in \(tallies.count) files, "
                + "\(refused) can_fail cases refused")
        for failure in tallies.flatMap(\.failures) { Issue.record("\(failure)") }
        #expect(total > 0 && passed == total)
    }

    /// What went wrong (nil when the case passes), and whether it was a `can_fail` case that was refused.
    static func runParseCase(_ testCase: ConformanceJSON) -> (problem: String?, refusedCanFail: Bool) {
        let problem = checkParseCase(testCase)
        let refused = problem == nil && (testCase["can_fail"]?.bool ?? false) && !parses(testCase)
        return (problem, refused)
    }

    static func parses(_ testCase: ConformanceJSON) -> Bool {
        guard let lines = testCase["raw"]?.array?.compactMap(\.string), let type = testCase["header_type"]?.string
        else { return false }
        return (try? ParsedField(parsing: lines.joined(separator: ", "), as: type)) != nil
    }

    /// Nil when the case passes, else what went wrong.
    static func checkParseCase(_ testCase: ConformanceJSON) -> String? {
        guard let lines = testCase["raw"]?.array?.compactMap(\.string), let type = testCase["header_type"]?.string
        else { return "malformed case" }
        let raw = lines.joined(separator: ", ")
        let mustFail = testCase["must_fail"]?.bool ?? false
        let canFail = testCase["can_fail"]?.bool ?? false
        let parsed = Result { () throws(StructuredFieldError) -> ParsedField in try ParsedField(parsing: raw, as: type)
        }
        if mustFail {
            if case .success(let value) = parsed { return "parsed \(value), must fail" }
            return nil
        }
        let value: ParsedField
        switch parsed {
        case .failure(let error): return canFail ? nil : "failed: \(error)"
        case .success(let success): value = success
        }
        let expected: ParsedField
        do {
            guard let json = testCase["expected"] else { return "no expected value" }
            expected = try ParsedField(expected: json, as: type)
        } catch { return "unreadable expected value: \(error)" }
        guard value == expected else { return "parsed \(value), expected \(expected)" }
        let canonical = (testCase["canonical"]?.array?.compactMap(\.string) ?? lines).joined(separator: ", ")
        for (what, field) in [("parsed", value), ("expected", expected)] {
            do {
                let text = try field.serialized()
                guard text == canonical else { return "\(what) value serialised to \(text), canonical \(canonical)" }
            } catch { return "\(what) value did not serialise: \(error)" }
        }
        return nil
    }

    static func runSerialisationCase(_ testCase: ConformanceJSON) -> String? {
        guard let type = testCase["header_type"]?.string, let json = testCase["expected"] else {
            return "malformed case"
        }
        let mustFail = testCase["must_fail"]?.bool ?? false
        let serialised: Result<String, any Error> = Result {
            try ParsedField(expected: json, as: type).serialized()
        }
        switch (serialised, mustFail) {
        case (.success(let text), true): return "serialised to \(text), must fail"
        case (.failure, true): return nil
        case (.failure(let error), false): return "failed: \(error)"
        case (.success(let text), false):
            let canonical = testCase["canonical"]?.array?.compactMap(\.string).joined(separator: ", ") ?? ""
            return text == canonical ? nil : "serialised to \(text), canonical \(canonical)"
        }
    }
}

/// One parsed field of the type a case names.
enum ParsedField: Equatable, CustomStringConvertible {
    case item(StructuredFieldItem)
    case list(StructuredFieldList)
    case dictionary(StructuredFieldDictionary)

    init(parsing raw: String, as type: String) throws(StructuredFieldError) {
        switch type {
        case "item": self = .item(try StructuredFieldItem(parsing: raw))
        case "list": self = .list(try StructuredFieldList(parsing: raw))
        default: self = .dictionary(try StructuredFieldDictionary(parsing: raw))
        }
    }

    /// Reads the suite's JSON form of a value (its README's mapping).
    init(expected json: ConformanceJSON, as type: String) throws {
        switch type {
        case "item": self = .item(try Self.item(json))
        case "list": self = .list(StructuredFieldList(try json.elements.map(Self.member)))
        default:
            var dictionary = StructuredFieldDictionary()
            for pair in try json.elements {
                let key = try pair.elements
                guard key.count == 2, let name = key[0].string else { throw ConformanceJSON.Failure(message: "pair") }
                dictionary[name] = try Self.member(key[1])
            }
            self = .dictionary(dictionary)
        }
    }

    func serialized() throws(StructuredFieldError) -> String {
        switch self {
        case .item(let item): return try item.serialized()
        case .list(let list): return try list.serialized()
        case .dictionary(let dictionary): return try dictionary.serialized()
        }
    }

    var description: String {
        switch self {
        case .item(let item): return "\(item)"
        case .list(let list): return "\(list.members)"
        case .dictionary(let dictionary): return "\(Array(dictionary))"
        }
    }

    static func member(_ json: ConformanceJSON) throws -> StructuredFieldMember {
        let pair = try json.elements
        guard pair.count == 2 else { throw ConformanceJSON.Failure(message: "member") }
        if case .array(let items) = pair[0] {
            return .innerList(StructuredFieldInnerList(try items.map(item), parameters: try parameters(pair[1])))
        }
        return .item(try item(json))
    }

    static func item(_ json: ConformanceJSON) throws -> StructuredFieldItem {
        let pair = try json.elements
        guard pair.count == 2 else { throw ConformanceJSON.Failure(message: "item") }
        return StructuredFieldItem(try bareItem(pair[0]), parameters: try parameters(pair[1]))
    }

    static func parameters(_ json: ConformanceJSON) throws -> StructuredFieldParameters {
        var parameters = StructuredFieldParameters()
        for pair in try json.elements {
            let entry = try pair.elements
            guard entry.count == 2, let key = entry[0].string else { throw ConformanceJSON.Failure(message: "param") }
            parameters[key] = try bareItem(entry[1])
        }
        return parameters
    }

    static func bareItem(_ json: ConformanceJSON) throws -> StructuredFieldBareItem {
        switch json {
        case .bool(let value): return .boolean(value)
        case .string(let value): return .string(value)
        case .number(let text):
            if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                guard let double = Double(text), let decimal = StructuredFieldDecimal(double) else {
                    throw ConformanceJSON.Failure(message: "decimal \(text)")
                }
                return .decimal(decimal)
            }
            guard let integer = Int64(text) else { throw ConformanceJSON.Failure(message: "integer \(text)") }
            return .integer(integer)
        case .object(let members):
            let fields = Dictionary(members, uniquingKeysWith: { first, _ in first })
            guard let type = fields["__type"]?.string, let value = fields["value"] else {
                throw ConformanceJSON.Failure(message: "typed object")
            }
            switch (type, value) {
            case ("token", .string(let text)): return .token(text)
            case ("displaystring", .string(let text)): return .displayString(text)
            case ("binary", .string(let text)): return .byteSequence(try Base32.decode(text))
            case ("date", .number(let text)):
                guard let seconds = Int64(text) else { throw ConformanceJSON.Failure(message: "date \(text)") }
                return .date(seconds)
            default: throw ConformanceJSON.Failure(message: "unknown __type \(type)")
            }
        default: throw ConformanceJSON.Failure(message: "bare item \(json)")
        }
    }
}

/// RFC 4648 §6 base32, as the suite writes byte sequences.
enum Base32 {
    static func decode(_ text: String) throws -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var output: [UInt8] = []
        var accumulator: UInt64 = 0
        var bits = 0
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: byte) else {
                throw ConformanceJSON.Failure(message: "base32 \(text)")
            }
            accumulator = accumulator << 5 | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(bits)))
                accumulator &= (1 << UInt64(bits)) - 1
            }
        }
        return output
    }
}

/// A JSON value that keeps each number's text, so that `1.0` stays a decimal and `0.0025` is read as
/// written (Foundation's decoders would hand back binary floating point or an integer).
indirect enum ConformanceJSON: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([ConformanceJSON])
    case object([(String, ConformanceJSON)])

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.description == rhs.description }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return "\(value)"
        case .number(let text): return text
        case .string(let text): return "\"\(text)\""
        case .array(let values): return "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { "\($0.0):\($0.1)" }.joined(separator: ",") + "}"
        }
    }

    subscript(key: String) -> ConformanceJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    var array: [ConformanceJSON]? {
        if case .array(let values) = self { return values }
        return nil
    }

    var elements: [ConformanceJSON] {
        get throws {
            guard let array else { throw Failure(message: "expected an array, found \(self)") }
            return array
        }
    }

    static func parse(_ data: Data) throws -> ConformanceJSON {
        var reader = Reader(bytes: Array(data))
        let value = try reader.value()
        reader.skipWhitespace()
        guard reader.position == reader.bytes.count else { throw Failure(message: "trailing JSON") }
        return value
    }

    struct Reader {
        let bytes: [UInt8]
        var position = 0

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func expect(_ text: String) throws {
            for byte in text.utf8 {
                guard position < bytes.count, bytes[position] == byte else { throw Failure(message: "JSON \(text)") }
                position += 1
            }
        }

        mutating func value() throws -> ConformanceJSON {
            skipWhitespace()
            guard position < bytes.count else { throw Failure(message: "JSON ended") }
            switch bytes[position] {
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                position += 1
                var values: [ConformanceJSON] = []
                skipWhitespace()
                if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(values)
                }
                while true {
                    values.append(try value())
                    skipWhitespace()
                    let separator = bytes[position]
                    position += 1
                    if separator == UInt8(ascii: "]") { return .array(values) }
                    guard separator == UInt8(ascii: ",") else { throw Failure(message: "JSON array") }
                }
            case UInt8(ascii: "{"):
                position += 1
                var members: [(String, ConformanceJSON)] = []
                skipWhitespace()
                if bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    let key = try string()
                    skipWhitespace()
                    try expect(":")
                    members.append((key, try value()))
                    skipWhitespace()
                    let separator = bytes[position]
                    position += 1
                    if separator == UInt8(ascii: "}") { return .object(members) }
                    guard separator == UInt8(ascii: ",") else { throw Failure(message: "JSON object") }
                }
            default:
                let start = position
                while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
                guard position > start else { throw Failure(message: "JSON value at \(start)") }
                return .number(String(decoding: bytes[start..<position], as: UTF8.self))
            }
        }

        mutating func string() throws -> String {
            try expect("\"")
            var scalars = String.UnicodeScalarView()
            var pendingHighSurrogate: UInt32?
            var raw: [UInt8] = []
            func flushRaw() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "\"") {
                    flushRaw()
                    return String(scalars)
                }
                guard byte == UInt8(ascii: "\\") else {
                    raw.append(byte)
                    continue
                }
                flushRaw()
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "u"):
                    let hex = String(decoding: bytes[position..<position + 4], as: UTF8.self)
                    position += 4
                    guard let code = UInt32(hex, radix: 16) else { throw Failure(message: "JSON \\u\(hex)") }
                    if (0xD800..<0xDC00).contains(code) {
                        pendingHighSurrogate = code
                    } else if let high = pendingHighSurrogate, (0xDC00..<0xE000).contains(code) {
                        pendingHighSurrogate = nil
                        let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                        if let scalar = Unicode.Scalar(combined) { scalars.append(scalar) }
                    } else if let scalar = Unicode.Scalar(code) {
                        scalars.append(scalar)
                    }
                default: scalars.append(Unicode.Scalar(escape))
                }
            }
            throw Failure(message: "JSON string ended")
        }
    }
}
