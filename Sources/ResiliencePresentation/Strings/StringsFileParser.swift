/// Parses the text form of Apple's `.strings` files (`"key" = "value";`, `/* */` and `//` comments, the
/// escapes `\"`, `\\`, `\n`, `\t`, `\r` and `\Uxxxx`, a scalar beyond U+FFFF as a surrogate pair of two) without
/// Foundation, so tables load identically on Linux and Apple platforms.
public enum StringsFileParser {
    /// Why a `.strings` text could not be parsed.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The 1-based line of the problem.
        public var line: Int
        /// What was wrong.
        public var reason: String
        /// `line N: reason`.
        public var description: String { "line \(line): \(reason)" }
    }

    /// The key–value pairs of `text`; a later duplicate key wins.
    public static func parse(_ text: String) throws(ParseError) -> [String: String] {
        var parser = Parser(scalars: Array(text.unicodeScalars))
        return try parser.parseTable()
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0
        var line = 1

        mutating func parseTable() throws(ParseError) -> [String: String] {
            var table: [String: String] = [:]
            while true {
                try skipTrivia()
                guard index < scalars.count else { return table }
                let key = try parseToken()
                try skipTrivia()
                if peek() == ";" {
                    index += 1
                    table[key] = key
                    continue
                }
                try expect("=")
                try skipTrivia()
                let value = try parseToken()
                try skipTrivia()
                try expect(";")
                table[key] = value
            }
        }

        func peek() -> Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func expect(_ scalar: Unicode.Scalar) throws(ParseError) {
            guard peek() == scalar else {
                throw ParseError(line: line, reason: "expected '\(scalar)'")
            }
            index += 1
        }

        mutating func skipTrivia() throws(ParseError) {
            while let scalar = peek() {
                if scalar == "\n" {
                    line += 1
                    index += 1
                } else if scalar == " " || scalar == "\t" || scalar == "\r" || scalar == "\u{FEFF}" {
                    index += 1
                } else if scalar == "/" && index + 1 < scalars.count && scalars[index + 1] == "*" {
                    index += 2
                    while index + 1 < scalars.count && !(scalars[index] == "*" && scalars[index + 1] == "/") {
                        if scalars[index] == "\n" { line += 1 }
                        index += 1
                    }
                    guard index + 1 < scalars.count else {
                        throw ParseError(line: line, reason: "unterminated comment")
                    }
                    index += 2
                } else if scalar == "/" && index + 1 < scalars.count && scalars[index + 1] == "/" {
                    while let next = peek(), next != "\n" { index += 1 }
                } else {
                    return
                }
            }
        }

        mutating func parseToken() throws(ParseError) -> String {
            guard peek() == "\"" else {
                var token = String.UnicodeScalarView()
                while let scalar = peek(),
                    scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                        || scalar == "_" || scalar == "." || scalar == "-"
                {
                    token.append(scalar)
                    index += 1
                }
                guard !token.isEmpty else { throw ParseError(line: line, reason: "expected a quoted string") }
                return String(token)
            }
            index += 1
            var result = String.UnicodeScalarView()
            while let scalar = peek() {
                index += 1
                switch scalar {
                case "\"":
                    return String(result)
                case "\\":
                    guard let escaped = peek() else { break }
                    index += 1
                    switch escaped {
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    case "r": result.append("\r")
                    case "U", "u":
                        result.append(try parseUnicodeEscape())
                    default: result.append(escaped)
                    }
                case "\n":
                    line += 1
                    result.append(scalar)
                default:
                    result.append(scalar)
                }
            }
            throw ParseError(line: line, reason: "unterminated string")
        }

        /// The scalar of a `\Uxxxx` escape whose `\U` has been read: four hex digits, or a UTF-16 surrogate pair
        /// written as two escapes (`\UD83D\UDE00`, as Foundation writes a scalar beyond U+FFFF).
        mutating func parseUnicodeEscape() throws(ParseError) -> Unicode.Scalar {
            let first = try parseHexQuad()
            if let scalar = Unicode.Scalar(first) { return scalar }
            guard (0xD800...0xDBFF).contains(first), peek() == "\\" else {
                throw ParseError(line: line, reason: "bad \\U escape")
            }
            index += 1
            guard let marker = peek(), marker == "U" || marker == "u" else {
                throw ParseError(line: line, reason: "bad \\U escape: a high surrogate without its low one")
            }
            index += 1
            let second = try parseHexQuad()
            guard (0xDC00...0xDFFF).contains(second),
                let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            else {
                throw ParseError(line: line, reason: "bad \\U escape: a high surrogate without its low one")
            }
            return scalar
        }

        /// Four hex digits of a `\U` escape.
        mutating func parseHexQuad() throws(ParseError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let hex = peek(), let digit = hexDigitValue(hex) else {
                    throw ParseError(line: line, reason: "bad \\U escape")
                }
                value = value * 16 + digit
                index += 1
            }
            return value
        }

        func hexDigitValue(_ scalar: Unicode.Scalar) -> UInt32? {
            switch scalar {
            case "0"..."9": scalar.value - 48
            default: hexLetterValue(scalar)
            }
        }

        func hexLetterValue(_ scalar: Unicode.Scalar) -> UInt32? {
            switch scalar {
            case "a"..."f": scalar.value - 87
            case "A"..."F": scalar.value - 55
            default: nil
            }
        }
    }
}
