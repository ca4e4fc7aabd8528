/// Escaping helpers shared by the exporters.
enum TextEscaping {
    /// `text` as a JSON string literal, quotes included.
    static func json(_ text: String) -> String {
        let body = escaped(text) { scalar in
            switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case _ where scalar.value < 0x20:
                "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: nil
            }
        }
        return "\"" + body + "\""
    }

    /// `text` escaped for a Prometheus label value (`\\`, `\"`, `\n`).
    static func prometheusLabel(_ text: String) -> String {
        escaped(text) { scalar in
            switch scalar {
            case "\\": "\\\\"
            case "\"": "\\\""
            case "\n": "\\n"
            default: nil
            }
        }
    }

    /// `text` escaped for a Prometheus HELP line (`\\`, `\n`).
    static func prometheusHelp(_ text: String) -> String {
        escaped(text) { scalar in
            switch scalar {
            case "\\": "\\\\"
            case "\n": "\\n"
            default: nil
            }
        }
    }

    /// `text` with each scalar that `replacement` names replaced by what it returns: the one escaping loop of
    /// the exporters.
    private static func escaped(_ text: String, _ replacement: (Unicode.Scalar) -> String?) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if let replaced = replacement(scalar) {
                result += replaced
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `duration` in seconds with millisecond precision (`1.250`), without Foundation formatters.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = Self.milliseconds(duration)
        let magnitude = milliseconds.magnitude
        let fraction = String(magnitude % 1000)
        let padded = String(repeating: "0", count: 3 - fraction.count) + fraction
        return (milliseconds < 0 ? "-" : "") + "\(magnitude / 1000).\(padded)"
    }

    /// `duration` in whole milliseconds, saturated at `Int64.min`/`Int64.max` for a duration beyond them (any
    /// `Duration` an event carries is written, never a crash).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let saturated: Int64 = seconds < 0 ? .min : .max
        let whole = seconds.multipliedReportingOverflow(by: 1000)
        guard !whole.overflow else { return saturated }
        let sum = whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return sum.overflow ? saturated : sum.partialValue
    }
}
