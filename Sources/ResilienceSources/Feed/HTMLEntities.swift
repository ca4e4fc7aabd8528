import Foundation

/// Named and numeric character references: the HTML5 table (generated into `HTMLEntityTable.swift`), the
/// byte-level rewrite that lets the XML parser read HTML entities, and decoding of escaped HTML.
///
/// XML defines five named entities; feeds use the HTML ones (`&nbsp;`, `&rArr;` …) anyway. Before parsing,
/// ``prepare(_:)`` rewrites every known HTML name to numeric references, an unknown name to a marked
/// placeholder (so the parser does not fail and the item can say which text was lost), a reference to a
/// character XML forbids the same way, and a bare `&` to `&amp;`; processing instructions after the XML
/// declaration are dropped. CDATA sections and comments are copied unchanged.
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

    static let xmlPredefined: Set<String> = ["amp", "lt", "gt", "quot", "apos"]

    /// The longest name in the table (`CounterClockwiseContourIntegral`).
    static let longestName = 32

    /// What ``prepare(_:)`` changed.
    struct Preparation {
        var data: Data
        var bareAmpersands = 0
    }

    /// `data` (UTF-8) with HTML entities made readable for an XML parser; returns `data` itself (no copy)
    /// when nothing needs rewriting.
    static func prepare(_ data: Data) -> Preparation {
        guard data.contains(UInt8(ascii: "&")) || containsProcessingInstruction(data) else {
            return Preparation(data: data)
        }
        return data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var output: [UInt8] = []
            var changed = false
            var bare = 0
            var copiedUpTo = 0
            var index = 0
            let count = bytes.count
            func replace(_ range: Range<Int>, with replacement: [UInt8]) {
                if !changed {
                    output.reserveCapacity(count + 256)
                    changed = true
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copiedUpTo..<range.lowerBound]))
                output.append(contentsOf: replacement)
                copiedUpTo = range.upperBound
            }
            while index < count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "<") {
                    if index + 1 < count, bytes[index + 1] == UInt8(ascii: "?"), !isDeclaration(bytes, at: index) {
                        // A processing instruction after the declaration carries nothing a feed needs, and
                        // Foundation's XMLParser on Linux crashes on one without data (`<?pi?>`): dropped.
                        let end = find(bytes, Array("?>".utf8), from: index + 2) ?? count
                        replace(index..<end, with: [])
                        index = end
                        continue
                    }
                    if let end = skipVerbatim(bytes, from: index) {
                        index = end
                        continue
                    }
                    index += 1
                    continue
                }
                guard byte == UInt8(ascii: "&") else {
                    index += 1
                    continue
                }
                let reference = scanReference(bytes, at: index)
                switch reference {
                case .valid(let end):
                    index = end
                case .named(let nameRange, let end):
                    let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameRange]), as: UTF8.self)
                    if xmlPredefined.contains(name) {
                        index = end
                        continue
                    }
                    var replacement: [UInt8] = []
                    if let value = table[name] {
                        for scalar in value.unicodeScalars { replacement += Array("&#\(scalar.value);".utf8) }
                    } else {
                        replacement = Array("&#xFDD0;".utf8) + Array(name.utf8) + Array("&#xFDD1;".utf8)
                    }
                    replace(index..<end, with: replacement)
                    index = end
                case .invalidNumeric(let textRange, let end):
                    let text = Array(UnsafeBufferPointer(rebasing: bytes[textRange]))
                    replace(index..<end, with: Array("&#xFDD0;".utf8) + text + Array("&#xFDD1;".utf8))
                    index = end
                case .bare:
                    bare += 1
                    replace(index..<(index + 1), with: Array("&amp;".utf8))
                    index += 1
                }
            }
            guard changed else { return Preparation(data: data) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copiedUpTo..<count]))
            return Preparation(data: Data(output), bareAmpersands: bare)
        }
    }

    /// True when `data` has a `<?` that is not the XML declaration at its very start.
    private static func containsProcessingInstruction(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count > 2 else { return false }
            for index in 0..<(bytes.count - 1)
            where bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == UInt8(ascii: "?")
                && !isDeclaration(bytes, at: index)
            {
                return true
            }
            return false
        }
    }

    /// True for `<?xml` followed by whitespace at the start of the document.
    private static func isDeclaration(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        guard index == 0, bytes.count > 5, hasPrefix(bytes, at: 0, Array("<?xml".utf8)) else { return false }
        let next = bytes[5]
        return next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D
    }

    private enum Reference {
        case valid(end: Int)
        case named(Range<Int>, end: Int)
        case invalidNumeric(Range<Int>, end: Int)
        case bare
    }

    private static func scanReference(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Reference {
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
            if !overflow, isXMLCharacter(value) { return .valid(end: index + 1) }
            return .invalidNumeric((start + 1)..<index, end: index + 1)
        }
        let nameStart = index
        guard index < count, isASCIILetter(bytes[index]) else { return .bare }
        while index < count, index - nameStart <= longestName, isASCIIAlphanumeric(bytes[index]) { index += 1 }
        guard index < count, bytes[index] == UInt8(ascii: ";"), index - nameStart <= longestName else { return .bare }
        return .named(nameStart..<index, end: index + 1)
    }

    /// The end of a CDATA section or comment starting at `start`, or `nil` when `start` begins neither.
    private static func skipVerbatim(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let cdata: [UInt8] = Array("<![CDATA[".utf8)
        let comment: [UInt8] = Array("<!--".utf8)
        if hasPrefix(bytes, at: start, cdata) {
            return find(bytes, Array("]]>".utf8), from: start + cdata.count) ?? bytes.count
        }
        if hasPrefix(bytes, at: start, comment) {
            return find(bytes, Array("-->".utf8), from: start + comment.count) ?? bytes.count
        }
        return nil
    }

    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, _ prefix: [UInt8]) -> Bool {
        guard start + prefix.count <= bytes.count else { return false }
        for offset in 0..<prefix.count where bytes[start + offset] != prefix[offset] { return false }
        return true
    }

    private static func find(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], hasPrefix(bytes, at: index, needle) { return index + needle.count }
            index += 1
        }
        return nil
    }

    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    private static func digitValue(_ byte: UInt8, hex: Bool) -> UInt32? {
        switch byte {
        case 48...57: UInt32(byte - 48)
        case 97...102 where hex: UInt32(byte - 87)
        case 65...70 where hex: UInt32(byte - 55)
        default: nil
        }
    }

    /// `text` with the unknown-entity placeholders ``prepare(_:)`` left removed; the names found are
    /// appended to `unknown`.
    static func removePlaceholders(_ text: String, unknown: inout [String]) -> String {
        guard text.unicodeScalars.contains(unknownStart) else { return text }
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
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "&")) else { return text }
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
