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
            // Every digit is read (leading zeros are allowed, `&#00000000065;` is `A`); a value past U+10FFFF
            // stops growing, so no length overflows it.
            while index < count {
                let byte = bytes[index]
                guard let digit = digitValue(byte, hex: hex) else { break }
                if !overflow {
                    value = value * (hex ? 16 : 10) + digit
                    overflow = value > 0x10_FFFF
                }
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
    /// written, as browsers do. A numeric reference never yields a control character
    /// (``numericReplacement(_:)``).
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
        if name.hasPrefix("#") {
            let hex = name.hasPrefix("#x") || name.hasPrefix("#X")
            let digits = name.utf8.dropFirst(hex ? 2 : 1)
            guard !digits.isEmpty else { return nil }
            var code: UInt32 = 0
            for byte in digits {
                guard let digit = digitValue(byte, hex: hex) else { return nil }
                // Saturates past U+10FFFF: any larger value is as far out of range.
                code = min(code * (hex ? 16 : 10) + digit, 0x11_0000)
            }
            return (String(Character(numericReplacement(code))), end)
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

    /// The character a numeric reference in HTML stands for, as HTML5 reads it, except that no control
    /// character comes out: NUL, surrogates, values past U+10FFFF and control characters (other than tab,
    /// line feed, form feed and carriage return) become U+FFFD, and 0x80–0x9F are read as the Windows-1252
    /// characters pages mean by them (`&#150;` is an en dash).
    static func numericReplacement(_ code: UInt32) -> Unicode.Scalar {
        if (0x80...0x9F).contains(code), let scalar = windows1252C1[Int(code - 0x80)] { return scalar }
        let isControl = (code < 0x20 && ![0x09, 0x0A, 0x0C, 0x0D].contains(code)) || (0x7F...0x9F).contains(code)
        guard !isControl, let scalar = Unicode.Scalar(code) else { return "\u{FFFD}" }
        return scalar
    }

    /// What Windows-1252 puts at 0x80–0x9F (`nil` where it defines nothing): HTML5's table for numeric
    /// references in that range.
    static let windows1252C1: [Unicode.Scalar?] = [
        "\u{20AC}", nil, "\u{201A}", "\u{0192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}", "\u{02C6}",
        "\u{2030}", "\u{0160}", "\u{2039}", "\u{0152}", nil, "\u{017D}", nil, nil, "\u{2018}", "\u{2019}",
        "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}", "\u{02DC}", "\u{2122}", "\u{0161}",
        "\u{203A}", "\u{0153}", nil, "\u{017E}", "\u{0178}",
    ]

    static func isASCIILetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool { isASCIILetter(byte) || (48...57).contains(byte) }
}
