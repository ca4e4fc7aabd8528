/// Formats a duration as a short relative time (`"5 minutes"`, `"1 hour"`) from the strings table:
/// deterministic, with no locale-dependent Foundation formatter.
///
/// A wait (``string(for:)``) rounds up to the largest unit that fits: under a minute in seconds, under an hour
/// in minutes, under a day in hours, otherwise days; so a 4 min 10 s wait reads "5 minutes" and never promises
/// too early, and one that rounds up to a whole larger unit reads in it (59 min 30 s is "1 hour"). An age (``string(forAge:)``) rounds down, so 1 min 50 s old reads "1 minute" and data never reads
/// older than it is.
///
/// A wait reads the `time.*` keys, an age the `age.*` keys (falling back to `time.*` when the table has none),
/// since languages inflect them differently: German waits "in 2 Tagen", but data is "2 Tage alt".
public struct RelativeTimeFormatter: Sendable, Hashable {
    /// The table with the `time.*` (and `age.*`) keys.
    public var strings: PresentationStrings

    /// Creates a formatter.
    ///
    /// - Parameter strings: The table with the `time.*` (and `age.*`) keys. Default: `.english`.
    public init(strings: PresentationStrings = .english) {
        self.strings = strings
    }

    /// A wait as text, rounded up; zero or negative durations read as one second.
    public func string(for duration: Duration) -> String {
        let (wholeSeconds, attoseconds) = duration.components
        let (roundedUp, overflow) = wholeSeconds.addingReportingOverflow(attoseconds > 0 ? 1 : 0)
        return text(seconds: max(1, overflow ? wholeSeconds : roundedUp), roundingUp: true)
    }

    /// An age as text, rounded down; under a second, and an age below zero (a clock set back), read as one
    /// second.
    public func string(forAge age: Duration) -> String {
        text(seconds: max(1, age.components.seconds), roundingUp: false)
    }

    private func text(seconds: Int64, roundingUp: Bool) -> String {
        var (unit, size) = Self.unit(of: seconds)
        var count = seconds / size + (roundingUp && seconds % size != 0 ? 1 : 0)
        // Rounded up to a whole next unit (59 min 30 s is 60 minutes), it reads in that unit: "1 hour".
        if roundingUp, case (let whole, false) = count.multipliedReportingOverflow(by: size),
            Self.unit(of: whole).size != size
        {
            (unit, size) = Self.unit(of: whole)
            count = whole / size
        }
        let form = "\(unit).\(count == 1 ? "one" : "other")"
        // An age has its own keys (German: "2 Tage alt", but "in 2 Tagen"); a table without them uses the wait's.
        let key = !roundingUp && strings.table["age.\(form)"] != nil ? "age.\(form)" : "time.\(form)"
        return strings.string(key, ["count": String(count)])
    }

    /// The largest unit that fits `seconds`, and its size in seconds.
    private static func unit(of seconds: Int64) -> (name: String, size: Int64) {
        switch seconds {
        case ..<60: ("second", 1)
        case ..<3600: ("minute", 60)
        case ..<86_400: ("hour", 3600)
        default: ("day", 86_400)
        }
    }
}
