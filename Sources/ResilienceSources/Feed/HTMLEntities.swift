import Foundation

/// Named and numeric character references: the HTML5 table (generated into `HTMLEntityTable.swift`), the
/// reference classification ``XMLTokenizer`` uses, and decoding of escaped HTML.
///
/// XML defines five named entities; feeds use the HTML ones (`&nbsp;`, `&rArr;` …) anyway. The tokenizer
/// decodes every known HTML name, turns an unknown name into a marked placeholder (so the item can say
/// which text was lost), a reference to a character XML forbids the same way, and reads a bare `&` as text.
enum HTMLEntities {
    /// Marks the start of an unknown entity's name in parsed text (a noncharacter, never in real text).
    static let unknownStart = Unicode.Scalar(0xFDD0 as UInt32)!
    /// Marks the end of an unknown entity's name in parsed text.
    static let unknownEnd = Unicode.Scalar(0xFDD1 as UInt32)!

    /// Name → replacement text, unpacked from ``packedTable`` on first use.
    static let table: [String: String] = {
        var table: [String: String] = [:]
        table.reserveCapacity(2_200)
        for entry in packedTable.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            var value = String.UnicodeScalarView()
            for hex in entry[entry.index(after: equals)...].split(separator: ".") {
                if let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) { value.append(scalar) }
            }
            table[String(entry[..<equals])] = String(value)
        }
        return table
    }()

    /// XML's five predefined entities.
    static let xmlPredefinedValues: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]

    /// The longest name in the table (`CounterClockwiseContourIntegral`).
    static let longestName = 32

    /// What a `&` starts.
    enum Reference {
        case valid(UInt32, end: Int)
        case named(Range<Int>, end: Int)
        case invalidNumeric(Range<Int>, end: Int)
        case bare
    }

    /// Classifies the reference (or bare `&`) at `start`.
    static func scanReference(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Reference {
        var index = start + 1
        let count = bytes.count
        if index < count, bytes[index] == UInt8(ascii: "#") {
            index += 1
            let hex = index < count && (bytes[index] == UInt8(ascii: "x") || bytes[index] == UInt8(ascii: "X"))
            if hex { index += 1 }
            let digitsStart = index
            var value: UInt32 = 0
            var overflow = false
            while index < count, index - digitsStart < 10 {
                let byte = bytes[index]
                guard let digit = digitValue(byte, hex: hex) else { break }
                let (product, o1) = value.multipliedReportingOverflow(by: hex ? 16 : 10)
                let (sum, o2) = product.addingReportingOverflow(digit)
                overflow = overflow || o1 || o2
                value = sum
                index += 1
            }
            guard index > digitsStart, index < count, bytes[index] == UInt8(ascii: ";") else { return .bare }
            if !overflow, isXMLCharacter(value) { return .valid(value, end: index + 1) }
            return .invalidNumeric((start + 1)..<index, end: index + 1)
        }
        let nameStart = index
        guard index < count, isASCIILetter(bytes[index]) else { return .bare }
        while index < count, index - nameStart <= longestName, isASCIIAlphanumeric(bytes[index]) { index += 1 }
        guard index < count, bytes[index] == UInt8(ascii: ";"), index - nameStart <= longestName else { return .bare }
        return .named(nameStart..<index, end: index + 1)
    }

    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    static func digitValue(_ byte: UInt8, hex: Bool) -> UInt32? {
        switch byte {
        case 48...57: UInt32(byte - 48)
        case 97...102 where hex: UInt32(byte - 87)
        case 65...70 where hex: UInt32(byte - 55)
        default: nil
        }
    }

    /// `text` with the unknown-entity placeholders the tokenizer left removed; the names found are
    /// appended to `unknown`.
    static func removePlaceholders(_ text: String, unknown: inout [String]) -> String {
        // U+FDD0 is EF B7 90 in UTF-8: most text has no 0xEF byte at all.
        guard text.utf8.contains(0xEF), text.unicodeScalars.contains(unknownStart) else { return text }
        var result = String.UnicodeScalarView()
        var name = String.UnicodeScalarView()
        var inName = false
        for scalar in text.unicodeScalars {
            if scalar == unknownStart {
                inName = true
                name = String.UnicodeScalarView()
            } else if scalar == unknownEnd, inName {
                inName = false
                unknown.append(String(name))
            } else if inName {
                name.append(scalar)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// `text` with named (HTML and XML) and numeric character references decoded; unknown ones kept as
    /// written, as browsers do.
    static func decode(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        return decode(utf8: Array(text.utf8))
    }

    /// The UTF-8 `bytes` as a string with character references decoded, as ``decode(_:)`` does (for callers
    /// that hold bytes: no intermediate string).
    static func decode(utf8 bytes: [UInt8]) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "&"), let (decoded, end) = decodeReference(bytes, at: index) {
                output.append(contentsOf: decoded.utf8)
                index = end
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func decodeReference(_ bytes: [UInt8], at start: Int) -> (String, Int)? {
        var index = start + 1
        while index < bytes.count, index - start <= longestName + 2, bytes[index] != UInt8(ascii: ";") {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "#") || isASCIIAlphanumeric(byte) else { return nil }
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ";"), index > start + 1 else { return nil }
        let name = String(decoding: bytes[(start + 1)..<index], as: UTF8.self)
        let end = index + 1
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            guard let code = UInt32(name.dropFirst(2), radix: 16) else { return nil }
            return (String(Unicode.Scalar(code).map(Character.init) ?? "\u{FFFD}"), end)
        }
        if name.hasPrefix("#") {
            guard let code = UInt32(name.dropFirst()) else { return nil }
            let scalar = code == 0 ? nil : Unicode.Scalar(code)
            return (String(scalar.map(Character.init) ?? "\u{FFFD}"), end)
        }
        switch name {
        case "amp": return ("&", end)
        case "lt": return ("<", end)
        case "gt": return (">", end)
        case "quot": return ("\"", end)
        case "apos": return ("'", end)
        default: return table[name].map { ($0, end) }
        }
    }

    static func isASCIILetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool { isASCIILetter(byte) || (48...57).contains(byte) }
}
