import Foundation

/// Parses the dates feeds carry: RFC 3339 (Atom, `2026-03-01T09:30:00Z`) and RFC 822/1123 (RSS,
/// `Sun, 01 Mar 2026 09:30:00 GMT`), without `DateFormatter` (no locale, no time-zone database, no
/// allocation beyond the input's bytes).
///
/// Lenient where feeds are sloppy (missing weekday or seconds, two-digit years, full month names, lower-case
/// `t`/`z`, a space instead of `T`, date-only), strict about ranges. Returns `nil` for anything else.
public enum FeedDateParser {
    /// The date in `text` (RFC 3339 tried first, then RFC 822), or `nil`.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8.prefix(96))
        var trimmed = bytes[...]
        while let first = trimmed.first, isSpace(first) { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, isSpace(last) { trimmed = trimmed.dropLast() }
        return parseRFC3339(trimmed) ?? parseRFC822(trimmed)
    }

    /// An RFC 3339 timestamp, or `nil`.
    public static func parseRFC3339(_ text: String) -> Date? { parseRFC3339(Array(text.utf8)[...]) }

    /// An RFC 822/1123 date, or `nil`.
    public static func parseRFC822(_ text: String) -> Date? { parseRFC822(Array(text.utf8)[...]) }

    private static func parseRFC3339(_ bytes: ArraySlice<UInt8>) -> Date? {
        var scanner = ByteScanner(bytes)
        guard let year = scanner.number(digits: 4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.number(digits: 2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.number(digits: 2)
        else { return nil }
        if scanner.isAtEnd { return date(year, month, day, 0, 0, 0, fraction: 0, offset: 0) }
        guard let separator = scanner.next(),
            [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(separator),
            let hour = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.number(digits: 2)
        else { return nil }
        var second = 0
        if scanner.take(UInt8(ascii: ":")) {
            guard let value = scanner.number(digits: 2) else { return nil }
            second = value
        }
        var fraction = 0.0
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
            var scale = 0.1
            var any = false
            while let digit = scanner.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                any = true
            }
            guard any else { return nil }
        }
        guard let offset = scanner.zoneOffset(), scanner.isAtEnd else { return nil }
        return date(year, month, day, hour, minute, second, fraction: fraction, offset: offset)
    }

    private static func parseRFC822(_ bytes: ArraySlice<UInt8>) -> Date? {
        var scanner = ByteScanner(bytes)
        scanner.skipSpaces()
        if let word = scanner.peekWord(), word.count >= 3, scanner.wordEndsWithComma(), !word.allSatisfy(isDigit) {
            scanner.skipWord()
            _ = scanner.take(UInt8(ascii: ","))
            scanner.skipSpaces()
        }
        guard let day = scanner.number(minDigits: 1, maxDigits: 2) else { return nil }
        scanner.skipSpacesOrDashes()
        guard let monthWord = scanner.word(), let month = monthNumber(monthWord) else { return nil }
        scanner.skipSpacesOrDashes()
        guard let yearDigits = scanner.digitRun(), yearDigits.count == 2 || yearDigits.count == 4 else { return nil }
        var year = yearDigits.reduce(0) { $0 * 10 + Int($1 - 48) }
        if yearDigits.count == 2 { year += year < 50 ? 2000 : 1900 }
        scanner.skipSpaces()
        guard let hour = scanner.number(minDigits: 1, maxDigits: 2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.number(digits: 2)
        else { return nil }
        var second = 0
        if scanner.take(UInt8(ascii: ":")) {
            guard let value = scanner.number(digits: 2) else { return nil }
            second = value
        }
        scanner.skipSpaces()
        var offset = 0
        if !scanner.isAtEnd {
            if let numeric = scanner.zoneOffset() {
                offset = numeric
            } else if let zone = scanner.word(), let named = namedZoneOffset(zone) {
                offset = named
            } else {
                return nil
            }
            scanner.skipSpaces()
            if scanner.take(UInt8(ascii: "(")) {
                return date(year, month, day, hour, minute, second, fraction: 0, offset: offset)
            }
            guard scanner.isAtEnd else { return nil }
        }
        return date(year, month, day, hour, minute, second, fraction: 0, offset: offset)
    }

    private static func date(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int, fraction: Double, offset: Int
    ) -> Date? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month, year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let adjustedYear = month <= 2 ? year - 1 : year
        let era = (adjustedYear >= 0 ? adjustedYear : adjustedYear - 399) / 400
        let yearOfEra = adjustedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func monthNumber(_ word: ArraySlice<UInt8>) -> Int? {
        guard word.count >= 3 else { return nil }
        let prefix = String(decoding: word.prefix(3), as: UTF8.self).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func namedZoneOffset(_ word: ArraySlice<UInt8>) -> Int? {
        switch String(decoding: word, as: UTF8.self).uppercased() {
        case "GMT", "UT", "UTC", "Z": 0
        case "EST": -5 * 3_600
        case "EDT": -4 * 3_600
        case "CST": -6 * 3_600
        case "CDT": -5 * 3_600
        case "MST": -7 * 3_600
        case "MDT": -6 * 3_600
        case "PST": -8 * 3_600
        case "PDT": -7 * 3_600
        case let zone where zone.count == 1 && zone.first?.isLetter == true && zone != "J": 0
        default: nil
        }
    }

    fileprivate static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    fileprivate static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }
}

/// A cursor over ASCII bytes for the date grammars.
private struct ByteScanner {
    var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    mutating func next() -> UInt8? { bytes.popFirst() }

    mutating func take(_ byte: UInt8) -> Bool {
        guard bytes.first == byte else { return false }
        bytes.removeFirst()
        return true
    }

    mutating func digit() -> Int? {
        guard let first = bytes.first, FeedDateParser.isDigit(first) else { return nil }
        bytes.removeFirst()
        return Int(first - 48)
    }

    mutating func number(digits: Int) -> Int? { number(minDigits: digits, maxDigits: digits) }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int? {
        var value = 0
        var count = 0
        while count < maxDigits, let digit = digit() {
            value = value * 10 + digit
            count += 1
        }
        return count < minDigits ? nil : value
    }

    mutating func digitRun() -> ArraySlice<UInt8>? {
        let run = bytes.prefix { FeedDateParser.isDigit($0) }
        guard !run.isEmpty, run.count <= 4 else { return nil }
        bytes.removeFirst(run.count)
        return run
    }

    func peekWord() -> ArraySlice<UInt8>? {
        let word = bytes.prefix { isLetterOrDigit($0) }
        return word.isEmpty ? nil : word
    }

    func wordEndsWithComma() -> Bool {
        let rest = bytes.drop { isLetterOrDigit($0) }
        return rest.first == UInt8(ascii: ",")
    }

    mutating func skipWord() { bytes = bytes.drop { isLetterOrDigit($0) } }

    mutating func word() -> ArraySlice<UInt8>? {
        let word = bytes.prefix { isLetter($0) }
        guard !word.isEmpty, word.count <= 12 else { return nil }
        bytes.removeFirst(word.count)
        return word
    }

    mutating func skipSpaces() { bytes = bytes.drop { FeedDateParser.isSpace($0) } }

    mutating func skipSpacesOrDashes() { bytes = bytes.drop { FeedDateParser.isSpace($0) || $0 == UInt8(ascii: "-") } }

    /// `Z`, `z`, `±HH:MM` or `±HHMM`, in seconds east of UTC.
    mutating func zoneOffset() -> Int? {
        if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) { return 0 }
        guard let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        var copy = self
        copy.bytes.removeFirst()
        guard let hours = copy.number(minDigits: 2, maxDigits: 2) else { return nil }
        _ = copy.take(UInt8(ascii: ":"))
        guard let minutes = copy.number(digits: 2), hours <= 23, minutes <= 59 else { return nil }
        self = copy
        let seconds = hours * 3_600 + minutes * 60
        return sign == UInt8(ascii: "-") ? -seconds : seconds
    }

    private func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    private func isLetterOrDigit(_ byte: UInt8) -> Bool { isLetter(byte) || FeedDateParser.isDigit(byte) }
}
