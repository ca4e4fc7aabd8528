import Foundation

/// Parses the dates feeds carry, without `DateFormatter` (no locale, no time-zone database): ISO 8601 /
/// RFC 3339 (Atom, W3C-DTF) and the textual forms of RFC 822/1123 and their real-world variants.
///
/// Accepted: ISO 8601 with `T` or a space, with or without seconds and fractions, with a zone `Z`, `±HH`,
/// `±HHMM` or `±HH:MM` (optionally after a space) or a named zone, or without a zone (read as UTC, reported
/// as ``Interpretation/zoneAssumed(_:)``), and reduced precision (`2003-12`, `2003`); RFC 822 with or without
/// weekday, seconds or time (date-only), two- or four-digit years, full or abbreviated month names, a comma
/// after the month or the day, `Dec 13, 2003` order, asctime (`Sun Nov  6 08:49:37 1994`), 12-hour times
/// (`10:30 PM`), numeric zones and the named zones in ``namedZones`` at their real offsets. Slash dates are
/// read only when the order is certain (`2003/12/13`, `13/12/2003`); `01/02/2003` is
/// ``Interpretation/ambiguous(_:)``, as is an unknown or ambiguous zone name (`IST`): no date is better than a
/// wrong instant.
public enum FeedDateParser {
    /// What a date string means.
    public enum Interpretation: Hashable, Sendable {
        /// A definite instant.
        case date(Date)
        /// A time without a zone, read as UTC.
        case zoneAssumed(Date)
        /// A date whose instant cannot be known, and why.
        case ambiguous(String)
        /// Not a date in any known form.
        case unrecognized

        /// The instant, when there is one.
        public var date: Date? {
            switch self {
            case .date(let date), .zoneAssumed(let date): date
            case .ambiguous, .unrecognized: nil
            }
        }
    }

    /// Named zones and their offsets from UTC in minutes. RFC 822's US zones, the European, Asian and
    /// Australian abbreviations feeds use; ambiguous abbreviations (`IST`: India, Ireland or Israel) are left
    /// out on purpose.
    public static let namedZones: [String: Int] = [
        "GMT": 0, "UT": 0, "UTC": 0, "Z": 0, "WET": 0, "WEST": 60, "BST": 60, "IST": .min,
        "EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420, "MDT": -360, "PST": -480, "PDT": -420,
        "AKST": -540, "AKDT": -480, "HST": -600, "AST": -240, "ADT": -180, "NST": -210, "NDT": -150,
        "CET": 60, "CEST": 120, "MET": 60, "MEST": 120, "MEZ": 60, "MESZ": 120, "EET": 120, "EEST": 180,
        "MSK": 180, "JST": 540, "KST": 540, "HKT": 480, "SGT": 480, "AWST": 480, "ACST": 570, "ACDT": 630,
        "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780, "PHT": 480, "WIB": 420, "ICT": 420,
    ]

    /// The date in `text`, or `nil` when there is no definite one (zone-less times count as UTC).
    public static func parse(_ text: String) -> Date? { interpret(text).date }

    /// What `text` means as a date.
    public static func interpret(_ text: String) -> Interpretation {
        let bytes = Array(text.utf8.prefix(128))
        var trimmed = bytes[...]
        while let first = trimmed.first, isSpace(first) { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, isSpace(last) { trimmed = trimmed.dropLast() }
        guard !trimmed.isEmpty, text.utf8.count <= 128 else { return .unrecognized }
        if trimmed.prefix(4).allSatisfy(isDigit), trimmed.count >= 4 {
            let iso = parseISO(trimmed)
            if iso != .unrecognized { return iso }
        }
        return parseTextual(trimmed)
    }

    /// An ISO 8601 / RFC 3339 timestamp, or `nil`.
    public static func parseRFC3339(_ text: String) -> Date? { parseISO(Array(text.utf8)[...]).date }

    /// An RFC 822/1123 date (or one of its variants), or `nil`.
    public static func parseRFC822(_ text: String) -> Date? { parseTextual(Array(text.utf8)[...]).date }

    // MARK: ISO 8601

    private static func parseISO(_ bytes: ArraySlice<UInt8>) -> Interpretation {
        var scanner = ByteScanner(bytes)
        guard let year = scanner.number(digits: 4) else { return .unrecognized }
        var month = 1
        var day = 1
        if scanner.take(UInt8(ascii: "-")) || scanner.take(UInt8(ascii: "/")) {
            guard let value = scanner.number(digits: 2) else { return .unrecognized }
            month = value
            if scanner.take(UInt8(ascii: "-")) || scanner.take(UInt8(ascii: "/")) {
                guard let value = scanner.number(digits: 2) else { return .unrecognized }
                day = value
            }
        } else if let value = scanner.number(digits: 2) {
            month = value
            guard let dayValue = scanner.number(digits: 2) else { return .unrecognized }
            day = dayValue
        }
        if scanner.isAtEnd { return definite(date(year, month, day, 0, 0, 0, fraction: 0, offsetMinutes: 0)) }
        guard let separator = scanner.next(),
            [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(separator),
            let hour = scanner.number(digits: 2)
        else { return .unrecognized }
        var minute = 0
        var second = 0
        var fraction = 0.0
        if scanner.take(UInt8(ascii: ":")) {
            guard let value = scanner.number(digits: 2) else { return .unrecognized }
            minute = value
            if scanner.take(UInt8(ascii: ":")) {
                guard let value = scanner.number(digits: 2) else { return .unrecognized }
                second = value
            }
        } else if let value = scanner.number(digits: 2) {
            minute = value
            second = scanner.number(digits: 2) ?? 0
        }
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
            var scale = 0.1
            var any = false
            while let digit = scanner.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                any = true
            }
            guard any else { return .unrecognized }
        }
        scanner.skipSpaces()
        if scanner.isAtEnd {
            return date(year, month, day, hour, minute, second, fraction: fraction, offsetMinutes: 0)
                .map(Interpretation.zoneAssumed) ?? .unrecognized
        }
        let offset: Int
        if let numeric = scanner.zoneOffset() {
            offset = numeric
        } else if let word = scanner.word() {
            switch zoneOffset(named: word) {
            case .some(.some(let value)): offset = value
            case .some(.none): return .ambiguous("the zone \(String(decoding: word, as: UTF8.self)) is ambiguous")
            case .none: return .ambiguous("unknown zone \(String(decoding: word, as: UTF8.self))")
            }
        } else {
            return .unrecognized
        }
        scanner.skipSpaces()
        guard scanner.isAtEnd else { return .unrecognized }
        return definite(date(year, month, day, hour, minute, second, fraction: fraction, offsetMinutes: offset))
    }

    // MARK: Textual (RFC 822, asctime, US order)

    private enum Token {
        case number(Int, digits: Int)
        case word(String)
        case time(hour: Int, minute: Int, second: Int)
        case offset(Int)
    }

    private static let weekdays: Set<String> = [
        "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "monday", "tuesday",
        "wednesday", "thursday", "friday", "saturday", "sunday",
    ]

    private static func parseTextual(_ bytes: ArraySlice<UInt8>) -> Interpretation {
        guard let tokens = tokenize(bytes) else { return .unrecognized }
        var month: Int?
        var numbers: [(Int, Int)] = []
        var time: (Int, Int, Int)?
        var meridiem: Bool?
        var offset: Int?
        var zoneProblem: String?
        var monthBeforeDay = false
        for token in tokens {
            switch token {
            case .number(let value, let digits): numbers.append((value, digits))
            case .time(let hour, let minute, let second):
                guard time == nil else { return .unrecognized }
                time = (hour, minute, second)
            case .offset(let value):
                guard offset == nil else { return .unrecognized }
                offset = value
            case .word(let word):
                let lower = word.lowercased()
                if weekdays.contains(lower) { continue }
                if month == nil, let value = monthNumber(lower) {
                    month = value
                    monthBeforeDay = numbers.isEmpty
                } else if lower == "am" || lower == "a.m." || lower == "pm" || lower == "p.m." {
                    guard time != nil, meridiem == nil else { return .unrecognized }
                    meridiem = lower.hasPrefix("p")
                } else if time != nil || offset != nil {
                    guard offset == nil else { continue }
                    switch zoneOffset(named: Array(word.utf8)[...]) {
                    case .some(.some(let value)): offset = value
                    case .some(.none): zoneProblem = "the zone \(word) is ambiguous"
                    case .none: zoneProblem = "unknown zone \(word)"
                    }
                } else {
                    return .unrecognized
                }
            }
        }
        let day: Int
        var year: Int
        if let month {
            guard numbers.count == 2 else { return .unrecognized }
            _ = monthBeforeDay
            if numbers[0].1 <= 2, numbers[1].1 == 4 || numbers[1].1 == 2 {
                (day, year) = (numbers[0].0, numbers[1].0)
            } else if numbers[0].1 == 4, numbers[1].1 <= 2 {
                (year, day) = (numbers[0].0, numbers[1].0)
            } else {
                return .unrecognized
            }
            if numbers[0].1 <= 2, numbers[1].1 == 2 { year += year < 50 ? 2000 : 1900 }
            return finish(year, month, day, time, meridiem, offset, zoneProblem)
        }
        return slashDate(numbers, time, meridiem, offset, zoneProblem, bytes: bytes)
    }

    private static func slashDate(
        _ numbers: [(Int, Int)], _ time: (Int, Int, Int)?, _ meridiem: Bool?, _ offset: Int?, _ zoneProblem: String?,
        bytes: ArraySlice<UInt8>
    ) -> Interpretation {
        guard numbers.count == 3, bytes.contains(UInt8(ascii: "/")) || bytes.contains(UInt8(ascii: ".")),
            numbers[2].1 == 4, numbers[0].1 <= 2, numbers[1].1 <= 2
        else { return .unrecognized }
        let (first, second, year) = (numbers[0].0, numbers[1].0, numbers[2].0)
        if first > 12, second <= 12 { return finish(year, second, first, time, meridiem, offset, zoneProblem) }
        if second > 12, first <= 12 { return finish(year, first, second, time, meridiem, offset, zoneProblem) }
        if first == second { return finish(year, first, second, time, meridiem, offset, zoneProblem) }
        return .ambiguous("day and month order unknown")
    }

    private static func finish(
        _ year: Int, _ month: Int, _ day: Int, _ time: (Int, Int, Int)?, _ meridiem: Bool?, _ offset: Int?,
        _ zoneProblem: String?
    ) -> Interpretation {
        var (hour, minute, second) = time ?? (0, 0, 0)
        if let meridiem {
            guard (1...12).contains(hour) else { return .unrecognized }
            hour = hour % 12 + (meridiem ? 12 : 0)
        }
        if let zoneProblem, offset == nil { return .ambiguous(zoneProblem) }
        guard let instant = date(year, month, day, hour, minute, second, fraction: 0, offsetMinutes: offset ?? 0)
        else { return .unrecognized }
        return time != nil && offset == nil ? .zoneAssumed(instant) : .date(instant)
    }

    private static func tokenize(_ bytes: ArraySlice<UInt8>) -> [Token]? {
        var scanner = ByteScanner(bytes)
        var tokens: [Token] = []
        while !scanner.isAtEnd {
            guard tokens.count < 12 else { return nil }
            if case .word = tokens.last {
                scanner.skipSeparators(afterWord: true)
            } else {
                scanner.skipSeparators(afterWord: false)
            }
            guard let first = scanner.peek() else { break }
            if first == UInt8(ascii: "(") {
                break  // a trailing comment: `+0000 (GMT)`
            } else if isDigit(first) {
                let run = scanner.digitRun()
                if scanner.peek() == UInt8(ascii: ":"), run.count <= 2 {
                    _ = scanner.next()
                    guard let minute = scanner.number(digits: 2) else { return nil }
                    var second = 0
                    if scanner.take(UInt8(ascii: ":")) {
                        guard let value = scanner.number(digits: 2) else { return nil }
                        second = value
                        if scanner.take(UInt8(ascii: ".")) { _ = scanner.digitRun() }
                    }
                    tokens.append(.time(hour: value(run), minute: minute, second: second))
                } else {
                    guard run.count <= 4 else { return nil }
                    tokens.append(.number(value(run), digits: run.count))
                }
            } else if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                guard let offset = scanner.zoneOffset() else { return nil }
                tokens.append(.offset(offset))
            } else if let word = scanner.word() {
                var text = String(decoding: word, as: UTF8.self)
                if text.count == 1, scanner.take(UInt8(ascii: ".")), let next = scanner.word(), next.count == 1 {
                    text += "." + String(decoding: next, as: UTF8.self) + "."
                    _ = scanner.take(UInt8(ascii: "."))
                }
                tokens.append(.word(text))
            } else {
                return nil
            }
        }
        return tokens
    }

    private static func value(_ digits: ArraySlice<UInt8>) -> Int { digits.reduce(0) { $0 * 10 + Int($1 - 48) } }

    // MARK: Shared

    private static func definite(_ date: Date?) -> Interpretation { date.map(Interpretation.date) ?? .unrecognized }

    private static func date(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int, fraction: Double,
        offsetMinutes: Int
    ) -> Date? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month, year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
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
    private static let fullMonths = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december",
    ]

    private static func monthNumber(_ lower: String) -> Int? {
        if let index = months.firstIndex(of: lower) ?? fullMonths.firstIndex(of: lower) { return index + 1 }
        if lower == "sept" { return 9 }
        return nil
    }

    /// `.some(offset)` for a known zone, `.some(nil)` for a known-ambiguous one, `nil` for an unknown one.
    private static func zoneOffset(named word: ArraySlice<UInt8>) -> Int?? {
        let name = String(decoding: word, as: UTF8.self).uppercased()
        if let minutes = namedZones[name] { return minutes == .min ? .some(nil) : .some(minutes) }
        if name.count == 1, name != "J", name.first?.isLetter == true { return .some(0) }
        return nil
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

    func peek() -> UInt8? { bytes.first }

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

    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    mutating func digitRun() -> ArraySlice<UInt8> {
        let run = bytes.prefix { FeedDateParser.isDigit($0) }
        bytes.removeFirst(run.count)
        return run
    }

    mutating func word() -> ArraySlice<UInt8>? {
        let word = bytes.prefix { isLetter($0) }
        guard !word.isEmpty, word.count <= 12 else { return nil }
        bytes.removeFirst(word.count)
        return word
    }

    mutating func skipSpaces() { bytes = bytes.drop { FeedDateParser.isSpace($0) } }

    /// Spaces, commas, slashes, dots and the dashes of `13-Dec-2003` (a dash before digits after a space is
    /// a zone offset, so only dashes between words and numbers are skipped).
    mutating func skipSeparators(afterWord: Bool) {
        while let first = bytes.first {
            if FeedDateParser.isSpace(first) || first == UInt8(ascii: ",") || first == UInt8(ascii: "/")
                || first == UInt8(ascii: ".")
            {
                bytes.removeFirst()
            } else if first == UInt8(ascii: "-"), let next = bytes.dropFirst().first, isLetter(next) {
                bytes.removeFirst()
            } else if first == UInt8(ascii: "-"), afterWord {
                bytes.removeFirst()
            } else {
                return
            }
        }
    }

    /// `Z`, `±HH`, `±HHMM` or `±HH:MM`, in minutes east of UTC.
    mutating func zoneOffset() -> Int? {
        if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) { return 0 }
        guard let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        var copy = self
        copy.bytes.removeFirst()
        guard let hours = copy.number(digits: 2) else { return nil }
        var minutes = 0
        if copy.take(UInt8(ascii: ":")) {
            guard let value = copy.number(digits: 2) else { return nil }
            minutes = value
        } else if let first = copy.bytes.first, FeedDateParser.isDigit(first) {
            guard let value = copy.number(digits: 2) else { return nil }
            minutes = value
        }
        guard hours <= 23, minutes <= 59 else { return nil }
        self = copy
        let total = hours * 60 + minutes
        return sign == UInt8(ascii: "-") ? -total : total
    }

    private func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
}
