#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// A small hand-written SVG line chart: axes, grid, series, a shaded fault window and a legend.
public struct SVGChart: Sendable {
    /// One line on the chart.
    public struct Series: Sendable {
        /// The legend text.
        public var name: String
        /// Points in data coordinates.
        public var points: [(x: Double, y: Double)]
        /// True for a dashed line (theoretical curves).
        public var dashed: Bool
        /// The line's colour (`#rrggbb`); the palette's colour for its index when `nil`.
        public var color: String?

        /// Creates a series.
        public init(name: String, points: [(x: Double, y: Double)], dashed: Bool = false, color: String? = nil) {
            self.color = color
            self.name = name
            self.points = points
            self.dashed = dashed
        }
    }

    /// The title.
    public var title: String
    /// The x axis label.
    public var xLabel: String
    /// The y axis label.
    public var yLabel: String
    /// The lines.
    public var series: [Series]
    /// A shaded span of x (the fault), if any.
    public var shaded: (from: Double, to: Double)?
    /// True for a base-10 logarithmic x axis.
    public var logarithmicX = false
    /// Horizontal reference lines (capacity, offered load), drawn grey and dashed with their labels.
    public var references: [(label: String, y: Double)] = []

    static let palette = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#393b79", "#000000", "#637939", "#843c39",
    ]

    /// Creates a chart.
    public init(
        title: String, xLabel: String, yLabel: String, series: [Series], shaded: (from: Double, to: Double)? = nil
    ) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.series = series
        self.shaded = shaded
    }

    /// The SVG document.
    public func render() -> String {
        let width = 900.0
        let height = 520.0
        let left = 70.0
        let right = 250.0
        let top = 40.0
        let bottom = 60.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let xs = series.flatMap { $0.points.map { transformX($0.x) } }
        let ys = series.flatMap { $0.points.map(\.y) } + references.map(\.y)
        let xMin = xs.min() ?? 0
        let xMax = max(xs.max() ?? 1, xMin + 1e-9)
        let yMax = niceCeiling(max(ys.max() ?? 1, 1e-9))
        func px(_ x: Double) -> Double { left + (transformX(x) - xMin) / (xMax - xMin) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - min(max(y, 0), yMax) / yMax * plotHeight }
        func f(_ value: Double) -> String { FixedFormat.number(value, decimals: 1) }

        var svg: [String] = []
        svg.append(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(width))\" height=\"\(f(height))\" "
                + "viewBox=\"0 0 \(f(width)) \(f(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">"
        )
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")
        svg.append("<text x=\"\(f(left))\" y=\"24\" font-size=\"16\" font-weight=\"bold\">\(escape(title))</text>")
        if let shaded {
            let x1 = px(shaded.from)
            let x2 = px(shaded.to)
            svg.append(
                "<rect x=\"\(f(x1))\" y=\"\(f(top))\" width=\"\(f(max(0, x2 - x1)))\" height=\"\(f(plotHeight))\" "
                    + "fill=\"#f4c7c3\" opacity=\"0.5\"/>")
            svg.append("<text x=\"\(f(x1 + 4))\" y=\"\(f(top + 14))\" fill=\"#a33\">fault</text>")
        }
        for step in 0...5 {
            let value = yMax * Double(step) / 5
            let y = py(value)
            svg.append(
                "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y))\" stroke=\"#e0e0e0\"/>"
            )
            svg.append(
                "<text x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(label(value))</text>")
        }
        for tick in xTicks(xMin, xMax) {
            let x = left + (tick - xMin) / (xMax - xMin) * plotWidth
            svg.append(
                "<line x1=\"\(f(x))\" y1=\"\(f(top))\" x2=\"\(f(x))\" y2=\"\(f(top + plotHeight))\" stroke=\"#f0f0f0\"/>"
            )
            let shown = logarithmicX ? tenToThe(tick) : tick
            svg.append(
                "<text x=\"\(f(x))\" y=\"\(f(top + plotHeight + 18))\" text-anchor=\"middle\">\(label(shown))</text>")
        }
        svg.append(
            "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" "
                + "fill=\"none\" stroke=\"#333\"/>")
        svg.append(
            "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 16))\" text-anchor=\"middle\">\(escape(xLabel))</text>"
        )
        svg.append(
            "<text x=\"16\" y=\"\(f(top + plotHeight / 2))\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 16 \(f(top + plotHeight / 2)))\">\(escape(yLabel))</text>")
        for reference in references {
            let y = py(reference.y)
            svg.append(
                "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y))\" "
                    + "stroke=\"#555555\" stroke-width=\"1\" stroke-dasharray=\"2 3\"/>")
            svg.append(
                "<text x=\"\(f(left + plotWidth - 4))\" y=\"\(f(y - 4))\" text-anchor=\"end\" fill=\"#555555\">"
                    + "\(escape(reference.label))</text>")
        }
        for (index, line) in series.enumerated() {
            let color = line.color ?? Self.palette[index % Self.palette.count]
            let path = line.points.map { "\(f(px($0.x))),\(f(py($0.y)))" }.joined(separator: " ")
            let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
            svg.append(
                "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.6\"\(dash) points=\"\(path)\"/>")
            let legendY = top + 8 + Double(index) * 18
            let legendX = left + plotWidth + 16
            svg.append(
                "<line x1=\"\(f(legendX))\" y1=\"\(f(legendY))\" x2=\"\(f(legendX + 22))\" y2=\"\(f(legendY))\" "
                    + "stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>")
            svg.append("<text x=\"\(f(legendX + 28))\" y=\"\(f(legendY + 4))\">\(escape(line.name))</text>")
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    private func transformX(_ x: Double) -> Double {
        logarithmicX ? log10(max(x, 1e-12)) : x
    }

    private func tenToThe(_ tick: Double) -> Double {
        var result = 1.0
        let whole = Int(tick.rounded())
        if whole >= 0 {
            for _ in 0..<whole { result *= 10 }
        } else {
            for _ in 0..<(-whole) { result /= 10 }
        }
        return result
    }

    private func xTicks(_ low: Double, _ high: Double) -> [Double] {
        if logarithmicX {
            return Array(Int(low.rounded(.down))...Int(high.rounded(.up))).map(Double.init).filter {
                $0 >= low - 1e-9 && $0 <= high + 1e-9
            }
        }
        let step = niceCeiling((high - low) / 8)
        var ticks: [Double] = []
        var tick = (low / step).rounded(.up) * step
        while tick <= high + 1e-9 {
            ticks.append(tick)
            tick += step
        }
        return ticks
    }

    private func niceCeiling(_ value: Double) -> Double {
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        while magnitude > value { magnitude /= 10 }
        for factor in [1.0, 2.0, 2.5, 5.0, 10.0] where factor * magnitude >= value {
            return factor * magnitude
        }
        return 10 * magnitude
    }

    private func label(_ value: Double) -> String {
        if value == 0 { return "0" }
        if abs(value) >= 100 { return FixedFormat.number(value, decimals: 0) }
        if abs(value) >= 1 { return FixedFormat.number(value, decimals: 1) }
        if abs(value) >= 0.01 { return FixedFormat.number(value, decimals: 2) }
        return FixedFormat.number(value, decimals: 3)
    }

    private func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
