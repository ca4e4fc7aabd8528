import Foundation

/// HTML named entities as feeds use them (`&nbsp;`, `&mdash;`, `&eacute;` …), which XML does not define.
///
/// Before parsing, ``numericReferences(in:)`` rewrites the known ones to numeric character references so the
/// XML parser accepts them; after parsing, ``decode(_:)`` and ``plainText(fromHTML:maximumLength:)`` turn
/// escaped HTML in titles and descriptions into readable text. Unknown names are left alone (the XML parser
/// then reports them as malformed input).
enum HTMLEntities {
    static let table: [String: UInt32] = [
        "nbsp": 160, "iexcl": 161, "cent": 162, "pound": 163, "curren": 164, "yen": 165, "brvbar": 166,
        "sect": 167, "uml": 168, "copy": 169, "ordf": 170, "laquo": 171, "not": 172, "shy": 173, "reg": 174,
        "macr": 175, "deg": 176, "plusmn": 177, "sup2": 178, "sup3": 179, "acute": 180, "micro": 181,
        "para": 182, "middot": 183, "cedil": 184, "sup1": 185, "ordm": 186, "raquo": 187, "frac14": 188,
        "frac12": 189, "frac34": 190, "iquest": 191, "Agrave": 192, "Aacute": 193, "Acirc": 194, "Atilde": 195,
        "Auml": 196, "Aring": 197, "AElig": 198, "Ccedil": 199, "Egrave": 200, "Eacute": 201, "Ecirc": 202,
        "Euml": 203, "Igrave": 204, "Iacute": 205, "Icirc": 206, "Iuml": 207, "ETH": 208, "Ntilde": 209,
        "Ograve": 210, "Oacute": 211, "Ocirc": 212, "Otilde": 213, "Ouml": 214, "times": 215, "Oslash": 216,
        "Ugrave": 217, "Uacute": 218, "Ucirc": 219, "Uuml": 220, "Yacute": 221, "THORN": 222, "szlig": 223,
        "agrave": 224, "aacute": 225, "acirc": 226, "atilde": 227, "auml": 228, "aring": 229, "aelig": 230,
        "ccedil": 231, "egrave": 232, "eacute": 233, "ecirc": 234, "euml": 235, "igrave": 236, "iacute": 237,
        "icirc": 238, "iuml": 239, "eth": 240, "ntilde": 241, "ograve": 242, "oacute": 243, "ocirc": 244,
        "otilde": 245, "ouml": 246, "divide": 247, "oslash": 248, "ugrave": 249, "uacute": 250, "ucirc": 251,
        "uuml": 252, "yacute": 253, "thorn": 254, "yuml": 255, "OElig": 338, "oelig": 339, "Scaron": 352,
        "scaron": 353, "Yuml": 376, "fnof": 402, "circ": 710, "tilde": 732, "ensp": 8194, "emsp": 8195,
        "thinsp": 8201, "zwnj": 8204, "zwj": 8205, "lrm": 8206, "rlm": 8207, "ndash": 8211, "mdash": 8212,
        "lsquo": 8216, "rsquo": 8217, "sbquo": 8218, "ldquo": 8220, "rdquo": 8221, "bdquo": 8222,
        "dagger": 8224, "Dagger": 8225, "bull": 8226, "hellip": 8230, "permil": 8240, "prime": 8242,
        "Prime": 8243, "lsaquo": 8249, "rsaquo": 8250, "euro": 8364, "trade": 8482, "larr": 8592,
        "uarr": 8593, "rarr": 8594, "darr": 8595, "harr": 8596, "minus": 8722, "le": 8804, "ge": 8805,
        "ne": 8800, "infin": 8734, "hearts": 9829, "check": 10003,
    ]

    static let xmlPredefined: [String: UInt32] = ["amp": 38, "lt": 60, "gt": 62, "quot": 34, "apos": 39]

    /// `data` with every known HTML named entity rewritten as a numeric character reference (`&#160;`).
    /// Returns `data` itself (no copy) when there is nothing to rewrite.
    static func numericReferences(in data: Data) -> Data {
        guard data.contains(UInt8(ascii: "&")) else { return data }
        var output = Data()
        var changed = false
        var index = data.startIndex
        var copiedUpTo = data.startIndex
        while index < data.endIndex {
            guard data[index] == UInt8(ascii: "&") else {
                index += 1
                continue
            }
            var end = index + 1
            while end < data.endIndex, end - index <= 10, isASCIIAlphanumeric(data[end]) { end += 1 }
            if end < data.endIndex, data[end] == UInt8(ascii: ";"), end > index + 1,
                let name = String(bytes: data[(index + 1)..<end], encoding: .ascii),
                xmlPredefined[name] == nil, let scalar = table[name]
            {
                if !changed {
                    output.reserveCapacity(data.count + 64)
                    changed = true
                }
                output.append(data[copiedUpTo..<index])
                output.append(contentsOf: Array("&#\(scalar);".utf8))
                copiedUpTo = end + 1
                index = end + 1
            } else {
                index += 1
            }
        }
        guard changed else { return data }
        output.append(data[copiedUpTo..<data.endIndex])
        return output
    }

    /// `text` with named (HTML and XML) and numeric character references decoded; unknown ones kept.
    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "&", let semicolon = scalars[index...].prefix(12).firstIndex(of: ";"),
                semicolon > index + 1,
                let decoded = decodeReference(String(String.UnicodeScalarView(scalars[(index + 1)..<semicolon])))
            else {
                result.append(scalar)
                index += 1
                continue
            }
            result.append(decoded)
            index = semicolon + 1
        }
        return String(result)
    }

    /// Readable text from an HTML fragment: tags removed (block tags become spaces), entities decoded,
    /// whitespace (including no-break spaces) collapsed, at most `maximumLength` characters.
    static func plainText(fromHTML html: String, maximumLength: Int) -> String {
        var stripped = String.UnicodeScalarView()
        var insideTag = false
        for scalar in html.unicodeScalars {
            if insideTag {
                if scalar == ">" { insideTag = false }
            } else if scalar == "<" {
                insideTag = true
                stripped.append(" ")
            } else {
                stripped.append(scalar)
            }
        }
        return collapseWhitespace(decode(String(stripped)), maximumLength: maximumLength)
    }

    /// `text` with runs of whitespace (including U+00A0) replaced by one space and trimmed, at most
    /// `maximumLength` characters.
    static func collapseWhitespace(_ text: String, maximumLength: Int) -> String {
        var result = ""
        var pendingSpace = false
        var count = 0
        for character in text {
            if character.isWhitespace || character == "\u{00A0}" {
                pendingSpace = !result.isEmpty
                continue
            }
            if count >= maximumLength { break }
            if pendingSpace {
                result.append(" ")
                pendingSpace = false
            }
            result.append(character)
            count += 1
        }
        return result
    }

    private static func decodeReference(_ name: String) -> Unicode.Scalar? {
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            return UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
        }
        if name.hasPrefix("#") { return UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init) }
        return (table[name] ?? xmlPredefined[name]).flatMap(Unicode.Scalar.init)
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
    }
}
