/// Escaping helpers shared by the exporters.
enum TextEscaping {
    /// `text` as a JSON string literal, quotes included.
    static func json(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// `text` escaped for a Prometheus label value (`\\`, `\"`, `\n`).
    static func prometheusLabel(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` escaped for a Prometheus HELP line (`\\`, `\n`).
    static func prometheusHelp(_ text: String) -> String {
        text.replacingBackslashesAndNewlines()
    }

    /// `duration` in seconds with millisecond precision (`1.250`), without Foundation formatters.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        var milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        let negative = milliseconds < 0
        milliseconds = abs(milliseconds)
        let fraction = String(milliseconds % 1000)
        let padded = String(repeating: "0", count: 3 - fraction.count) + fraction
        return (negative ? "-" : "") + "\(milliseconds / 1000).\(padded)"
    }

    /// `duration` in whole milliseconds.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension String {
    fileprivate func replacingBackslashesAndNewlines() -> String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
