/// Locale-free, platform-independent number formatting, so reports are byte-identical for a seed.
enum FixedFormat {
    /// `value` with exactly `decimals` digits after the point (half away from zero); `-` for NaN/∞.
    static func number(_ value: Double, decimals: Int = 2) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<max(0, decimals) { scale *= 10 }
        let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e15 else { return value < 0 ? "-inf" : "inf" }
        let integer = Int64(scaled)
        let divisor = Int64(scale)
        let whole = integer / divisor
        let fraction = integer % divisor
        let sign = value < 0 && integer != 0 ? "-" : ""
        guard decimals > 0 else { return "\(sign)\(whole)" }
        var fractionText = String(fraction)
        while fractionText.count < decimals { fractionText = "0" + fractionText }
        return "\(sign)\(whole).\(fractionText)"
    }

    /// A percentage of `fraction` (0.5 → `50.00%`).
    static func percent(_ fraction: Double, decimals: Int = 2) -> String {
        number(fraction * 100, decimals: decimals) + "%"
    }

    /// A duration in seconds (`1.250 s`), or `never` for `nil`.
    static func seconds(_ duration: Duration?, decimals: Int = 3) -> String {
        guard let duration else { return "never" }
        return number(duration.seconds, decimals: decimals) + " s"
    }

    /// A duration in milliseconds (`12.5 ms`), or `-` for `nil`.
    static func milliseconds(_ duration: Duration?, decimals: Int = 1) -> String {
        guard let duration else { return "-" }
        return number(duration.seconds * 1000, decimals: decimals) + " ms"
    }

    /// A JSON string literal.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A JSON number (`null` for NaN/∞).
    static func jsonNumber(_ value: Double, decimals: Int = 4) -> String {
        value.isFinite ? number(value, decimals: decimals) : "null"
    }
}
