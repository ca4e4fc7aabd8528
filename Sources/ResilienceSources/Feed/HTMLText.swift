import Foundation

/// Escaped HTML from feeds turned into plain text or into a small, safe subset of HTML.
///
/// One linear tokenizer over the UTF-8 bytes, following HTML5's rules where they matter for safety: `<`
/// starts a tag only before a letter, `/`, `!` or `?`; the contents of `script`, `style` and other raw-text
/// elements are dropped with the element; an unterminated tag swallows the rest, as in a browser.
enum HTMLText {
    /// Elements whose whole content is dropped (never text to show).
    static let droppedWithContent: Set<String> = [
        "script", "style", "noscript", "template", "iframe", "object", "embed", "noembed", "noframes", "svg",
        "math", "head", "title", "textarea", "select", "xmp", "plaintext",
    ]
    /// Elements that separate words (rendered as a space in plain text).
    static let blocks: Set<String> = [
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure",
        "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "img", "li", "main", "nav", "ol", "p", "pre",
        "section", "table", "td", "th", "tr", "ul",
    ]
    /// Elements kept by ``sanitizedHTML(_:maximumLength:)``, with the attributes each may keep.
    static let allowed: [String: Set<String>] = [
        "a": ["href", "title"], "abbr": ["title"], "b": [], "blockquote": ["cite"], "br": [], "cite": [],
        "code": [], "dd": [], "del": [], "dl": [], "dt": [], "em": [], "figcaption": [], "figure": [], "h1": [],
        "h2": [], "h3": [], "h4": [], "h5": [], "h6": [], "hr": [], "i": [], "img": ["src", "alt", "title"],
        "ins": [], "kbd": [], "li": [], "ol": [], "p": [], "pre": [], "q": ["cite"], "s": [], "small": [],
        "span": [], "strong": [], "sub": [], "sup": [], "table": [], "tbody": [], "td": ["colspan", "rowspan"],
        "tfoot": [], "th": ["colspan", "rowspan"], "thead": [], "tr": [], "u": [], "ul": [],
    ]
    static let voidElements: Set<String> = ["br", "hr", "img"]
    static let urlAttributes: Set<String> = ["href", "src", "cite"]

    private enum Token {
        case text(Range<Int>)
        case start(name: String, attributes: [(String, String)])
        case end(name: String)
    }

    /// Readable text of possibly multiply-escaped HTML (`&amp;lt;script&amp;gt;` is common in titles): like
    /// ``plainText(fromHTML:maximumLength:)``, repeated (at most three times) while the text still contains
    /// markup after decoding, so no tag or script text survives.
    static func markupFreeText(fromHTML html: String, maximumLength: Int) -> String {
        var text = plainText(fromHTML: html, maximumLength: maximumLength)
        var passes = 0
        while passes < 3, containsMarkup(text) {
            text = plainText(fromHTML: escapingAmpersands(text), maximumLength: maximumLength)
            passes += 1
        }
        return text
    }

    /// `text` with every `&` written as `&amp;`.
    static func escapingAmpersands(_ text: String) -> String {
        guard text.utf8.contains(0x26) else { return text }
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if byte == 0x26 { result += [0x26, 0x61, 0x6D, 0x70, 0x3B] } else { result.append(byte) }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// True when `text` has a `<` that would start a tag, comment or declaration in HTML.
    static func containsMarkup(_ text: String) -> Bool {
        var previousWasOpen = false
        for byte in text.utf8 {
            if previousWasOpen, HTMLEntities.isASCIILetter(byte) || byte == 0x2F || byte == 0x21 || byte == 0x3F {
                return true
            }
            previousWasOpen = byte == 0x3C
        }
        return false
    }

    /// Readable text of an HTML fragment: tags removed (block elements become spaces), script and style
    /// content dropped, entities decoded, whitespace collapsed, at most `maximumLength` characters.
    static func plainText(fromHTML html: String, maximumLength: Int) -> String {
        guard html.utf8.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else {
            return collapseWhitespace(html, maximumLength: maximumLength)
        }
        let bytes = Array(html.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        tokenize(bytes, wantAttributes: false) { token in
            switch token {
            case .text(let range):
                output.append(contentsOf: bytes[range])
            case .start(let name, _), .end(let name):
                if blocks.contains(name) || droppedWithContent.contains(name) { output.append(0x20) }
            }
            return output.count < maximumLength * 8
        }
        return collapseWhitespace(decode(output), maximumLength: maximumLength)
    }

    /// The HTML fragment reduced to an allow-list of elements and attributes (no script, style, event
    /// handlers, frames or `javascript:` URLs); text re-escaped; at most about `maximumLength` characters of
    /// markup.
    static func sanitizedHTML(_ html: String, maximumLength: Int) -> String {
        let bytes = Array(html.utf8)
        // Built as bytes, not by `String` concatenation (one growing buffer, no temporary strings per token).
        var output: [UInt8] = []
        output.reserveCapacity(min(bytes.count, maximumLength * 4) + 64)
        tokenize(bytes, wantAttributes: true) { token in
            switch token {
            case .text(let range):
                let slice = bytes[range]
                if slice.contains(0x26) {
                    appendEscaped(decode(Array(slice)).utf8, quotes: false, to: &output)
                } else {
                    appendEscaped(slice, quotes: false, to: &output)
                }
            case .start(let name, let attributes):
                guard let permitted = allowed[name] else { break }
                output.append(0x3C)
                output.append(contentsOf: name.utf8)
                for (key, value) in attributes where permitted.contains(key) {
                    let decoded = decode(Array(value.utf8))
                    if urlAttributes.contains(key), !isSafeURL(decoded) { continue }
                    output.append(0x20)
                    output.append(contentsOf: key.utf8)
                    append("=\"", to: &output)
                    appendEscaped(decoded.utf8, quotes: true, to: &output)
                    output.append(0x22)
                }
                output.append(0x3E)
            case .end(let name):
                if allowed[name] != nil, !voidElements.contains(name) {
                    append("</", to: &output)
                    output.append(contentsOf: name.utf8)
                    output.append(0x3E)
                }
            }
            return output.count < maximumLength * 4
        }
        return String(decoding: output, as: UTF8.self).trimmedFeedWhitespace
    }

    /// `text` HTML-escaped (`&`, `<`, `>`, and `"` when `quotes`).
    static func escape(_ text: String, quotes: Bool) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || ($0 == 0x22 && quotes) }) else {
            return text
        }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count + 16)
        appendEscaped(utf8, quotes: quotes, to: &result)
        return String(decoding: result, as: UTF8.self)
    }

    /// Appends `text` HTML-escaped (`&`, `<`, `>`, and `"` when `quotes`) to `result`.
    private static func appendEscaped(_ text: some Sequence<UInt8>, quotes: Bool, to result: inout [UInt8]) {
        for byte in text {
            switch byte {
            // `StaticString` bytes: appending them allocates nothing (an `Array` per character did).
            case 0x26: append("&amp;", to: &result)
            case 0x3C: append("&lt;", to: &result)
            case 0x3E: append("&gt;", to: &result)
            case 0x22 where quotes: append("&quot;", to: &result)
            default: result.append(byte)
            }
        }
    }

    private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func isSafeURL(_ url: String) -> Bool {
        let cleaned = url.unicodeScalars.filter { $0.value > 0x20 }.map(Character.init)
        let lowered = String(cleaned).lowercased()
        guard let colon = lowered.firstIndex(of: ":") else { return true }
        let slash = lowered.firstIndex(of: "/") ?? lowered.endIndex
        let question = lowered.firstIndex(of: "?") ?? lowered.endIndex
        if slash < colon || question < colon { return true }
        let scheme = lowered[..<colon]
        return scheme == "http" || scheme == "https" || scheme == "mailto"
    }

    private static func decode(_ bytes: [UInt8]) -> String { HTMLEntities.decode(utf8: bytes) }

    /// Calls `emit` for each token until it returns `false` or the input ends.
    private static func tokenize(_ bytes: [UInt8], wantAttributes: Bool, emit: (Token) -> Bool) {
        let count = bytes.count
        var index = 0
        var textStart = 0
        func flushText(upTo end: Int) -> Bool {
            defer { textStart = end }
            return end > textStart ? emit(.text(textStart..<end)) : true
        }
        while index < count {
            guard bytes[index] == UInt8(ascii: "<"), index + 1 < count else {
                index += 1
                continue
            }
            let next = bytes[index + 1]
            if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") {
                guard flushText(upTo: index) else { return }
                let isComment = index + 3 < count && bytes[index + 2] == 0x2D && bytes[index + 3] == 0x2D
                index =
                    isComment
                    ? skip(past: Array("-->".utf8), in: bytes, from: index + 4)
                    : skip(past: [0x3E], in: bytes, from: index + 2)
                textStart = index
                continue
            }
            let isEnd = next == UInt8(ascii: "/")
            let nameStart = isEnd ? index + 2 : index + 1
            guard nameStart < count, HTMLEntities.isASCIILetter(bytes[nameStart]) else {
                if isEnd, nameStart < count {
                    // `</` followed by a non-letter is a bogus comment in HTML5.
                    guard flushText(upTo: index) else { return }
                    index = skip(past: [0x3E], in: bytes, from: nameStart)
                    textStart = index
                } else {
                    index += 1
                }
                continue
            }
            guard flushText(upTo: index) else { return }
            var cursor = nameStart
            while cursor < count, !isSpace(bytes[cursor]), bytes[cursor] != 0x3E, bytes[cursor] != 0x2F {
                cursor += 1
            }
            let name = String(decoding: bytes[nameStart..<cursor], as: UTF8.self).lowercased()
            let (after, attributes) = scanAttributes(bytes, from: cursor, collect: wantAttributes && !isEnd)
            cursor = after
            index = cursor
            textStart = cursor
            if isEnd {
                guard emit(.end(name: name)) else { return }
            } else if droppedWithContent.contains(name) {
                index = skipRawText(closing: name, in: bytes, from: cursor)
                textStart = index
                guard emit(.end(name: name)) else { return }
            } else {
                guard emit(.start(name: name, attributes: attributes)) else { return }
            }
        }
        _ = flushText(upTo: count)
    }

    /// Reads attributes up to and past the closing `>`; returns the index after it (or the end) and, when
    /// `collect`, the attributes.
    private static func scanAttributes(
        _ bytes: [UInt8], from start: Int, collect: Bool
    ) -> (Int, [(String, String)]) {
        let count = bytes.count
        var index = start
        var attributes: [(String, String)] = []
        while index < count {
            let byte = bytes[index]
            if byte == 0x3E { return (index + 1, attributes) }
            if isSpace(byte) || byte == 0x2F {
                index += 1
                continue
            }
            let keyStart = index
            while index < count, !isSpace(bytes[index]), bytes[index] != 0x3D, bytes[index] != 0x3E,
                bytes[index] != 0x2F || index == keyStart
            {
                index += 1
            }
            let key = String(decoding: bytes[keyStart..<index], as: UTF8.self).lowercased()
            while index < count, isSpace(bytes[index]) { index += 1 }
            var value = ""
            if index < count, bytes[index] == 0x3D {
                index += 1
                while index < count, isSpace(bytes[index]) { index += 1 }
                if index < count, bytes[index] == 0x22 || bytes[index] == 0x27 {
                    let quote = bytes[index]
                    let valueStart = index + 1
                    index = valueStart
                    while index < count, bytes[index] != quote { index += 1 }
                    value = String(decoding: bytes[valueStart..<min(index, count)], as: UTF8.self)
                    index = min(index + 1, count)
                } else {
                    let valueStart = index
                    while index < count, !isSpace(bytes[index]), bytes[index] != 0x3E { index += 1 }
                    value = String(decoding: bytes[valueStart..<index], as: UTF8.self)
                }
            }
            if collect { attributes.append((key, value)) }
        }
        return (count, attributes)
    }

    /// The index after `</name …>` (case-insensitive), or the end of the input.
    private static func skipRawText(closing name: String, in bytes: [UInt8], from start: Int) -> Int {
        let target = Array(name.utf8)
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x3C, bytes[index + 1] == 0x2F, index + 2 + target.count <= bytes.count {
                var matches = true
                for offset in 0..<target.count where lower(bytes[index + 2 + offset]) != target[offset] {
                    matches = false
                    break
                }
                let after = index + 2 + target.count
                if matches, after == bytes.count || !HTMLEntities.isASCIIAlphanumeric(bytes[after]) {
                    return skip(past: [0x3E], in: bytes, from: after)
                }
            }
            index += 1
        }
        return bytes.count
    }

    private static func skip(past needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle {
                return index + needle.count
            }
            index += 1
        }
        return bytes.count
    }

    private static func lower(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
    }

    /// `text` with runs of whitespace (including U+00A0) replaced by one space and trimmed, at most
    /// `maximumLength` Unicode scalars (so at most that many characters).
    static func collapseWhitespace(_ text: String, maximumLength: Int) -> String {
        var text = text
        // Speed: one pass over the contiguous UTF-8 bytes (the `String` index walk it replaces was a visible
        // share of a parse); multi-byte scalars are decoded by hand only to ask whether they are white space.
        return text.withUTF8 { bytes in
            var output: [UInt8] = []
            output.reserveCapacity(min(bytes.count, maximumLength * 4))
            var pendingSpace = false
            var count = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                let length = byte < 0x80 ? 1 : min(byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2, bytes.count - index)
                let isSpace: Bool
                if length == 1 {
                    isSpace = byte == 0x20 || (0x09...0x0D).contains(byte)
                } else {
                    var value = UInt32(byte) & (0xFF >> UInt32(length + 1))
                    for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
                    isSpace = Unicode.Scalar(value)?.isFeedWhitespace ?? false
                }
                if isSpace {
                    pendingSpace = !output.isEmpty
                    index += length
                    continue
                }
                if count >= maximumLength { break }
                if pendingSpace {
                    output.append(0x20)
                    pendingSpace = false
                }
                // Byte by byte: `append(contentsOf:)` of a one-scalar slice costs more than the copy itself.
                for offset in 0..<length { output.append(bytes[index + offset]) }
                count += 1
                index += length
            }
            return String(decoding: output, as: UTF8.self)
        }
    }
}
