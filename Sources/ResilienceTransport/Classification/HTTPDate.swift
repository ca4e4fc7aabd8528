import Foundation

/// Formats HTTP-dates as IMF-fixdate, and parses the three HTTP-date forms of RFC 9110 §5.6.7 without a `DateFormatter` (no locale, no allocation
/// beyond the split): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and ANSI C's asctime form (`Sun Nov  6 08:49:37 1994`).
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date, or nil when `text` is not a valid HTTP-date; a two-digit RFC 850 year is read against the
    /// current wall-clock time (``parse(_:now:)``).
    public static func parse(_ text: String) -> Date? { parse(text, now: Date()) }

    /// The date, or nil when `text` is not a valid HTTP-date. `now` places the two-digit year of the RFC 850
    /// form (RFC 9110 §5.6.7): it is the latest year with those last two digits that is not more than 50 years
    /// after `now`, so a year that would appear more than 50 years in the future is the most recent past one
    /// (in 2026, `76` is 2076 and `77` is 1977).
    public static func parse(_ text: String, now: Date) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 64 else { return nil }
        if let comma = trimmed.firstIndex(of: ",") {
            guard isDayName(trimmed[..<comma]) else { return nil }
            // One space between the parts exactly (RFC 9110 §5.6.7); the zone's case is not significant.
            let rest = trimmed[trimmed.index(after: comma)...]
            let parts = Array(rest.split(separator: " ", omittingEmptySubsequences: false).dropFirst())
            guard rest.first == " ", !parts.contains(where: \.isEmpty) else { return nil }
            if parts.count == 5, parts[4].uppercased() == "GMT", parts[2].count == 4 {
                return make(day: parts[0], month: parts[1], year: parts[2], time: parts[3])
            }
            if parts.count == 3, parts[2].uppercased() == "GMT" {
                let dayMonthYear = parts[0].split(separator: "-")
                guard dayMonthYear.count == 3, dayMonthYear[2].count == 2, let shortYear = Int(dayMonthYear[2])
                else { return nil }
                let limit = fiftyYears(after: now)
                let year = limit.year - ((limit.year - shortYear) % 100 + 100) % 100
                func date(_ year: Int) -> Date? {
                    make(day: dayMonthYear[0], month: dayMonthYear[1], year: Substring(String(year)), time: parts[1])
                }
                guard let candidate = date(year), candidate <= limit.date else { return date(year - 100) }
                return candidate
            }
            return nil
        }
        let parts = trimmed.split(separator: " ")
        guard parts.count == 5, isDayName(parts[0]), parts[4].count == 4 else { return nil }
        return make(day: parts[2], month: parts[1], year: parts[4], time: parts[3])
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), or in the obsolete RFC 850 form
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) when `rfc850` is true; fractions of a second are dropped.
    public static func format(_ date: Date, rfc850: Bool = false) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (index 4, Sunday = 0).
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let time =
            "\(twoDigits(secondOfDay / 3_600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
        let monthName = monthNames[month - 1]
        if rfc850 {
            return "\(longDayNames[weekday]), \(twoDigits(day))-\(monthName)-\(twoDigits(year % 100)) \(time)"
        }
        return "\(shortDayNames[weekday]), \(twoDigits(day)) \(monthName) \(year) \(time)"
    }

    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    private static let shortDayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

    /// The instant 50 calendar years after `now` (same month, day and time of day) and its year.
    /// A `now` that is not finite or lies beyond the years 4 digits can write is read as the nearest such
    /// instant, never trapping.
    private static func fiftyYears(after now: Date) -> (date: Date, year: Int) {
        let since1970 = now.timeIntervalSince1970
        let seconds = since1970.isNaN ? 0 : Int(min(max(since1970, -1e12), 1e12).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (year, month, day) = civil(fromDays: days)
        let later = daysFromCivil(year: year + 50, month: month, day: day)
        return (Date(timeIntervalSince1970: TimeInterval(later * 86_400 + seconds - days * 86_400)), year + 50)
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func isDayName(_ text: Substring) -> Bool {
        (3...9).contains(text.count) && text.allSatisfy { $0.isASCII && $0.isLetter }
    }

    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static func make(day: Substring, month: Substring, year: Substring, time: Substring) -> Date? {
        guard let day = number(day, digits: 1...2), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: month.lowercased()), month.count == 3,
            let year = number(year, digits: 4...4), day <= daysIn(month: monthIndex + 1, year: year)
        else { return nil }
        let clock = time.split(separator: ":")
        guard clock.count == 3, let hour = number(clock[0], digits: 2...2),
            let minute = number(clock[1], digits: 2...2),
            let second = number(clock[2], digits: 2...2), hour < 24, minute < 60, second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// How many days `month` (1–12) of `year` has: a date past them (`31 Feb`) is not a date, rather than a
    /// day of the next month.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
