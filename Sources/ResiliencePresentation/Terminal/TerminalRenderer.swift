import ResilienceCore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Renders ``UserFacingError``s and per-source status for command-line programs and demos.
///
/// Colour is used only when the output is a terminal and `NO_COLOR` is unset or empty (no-color.org), and
/// `TERM` is not `dumb`; both inputs are injected, so tests need no terminal. ``standardOutput(strings:)`` reads them
/// from the process as the documented default.
public struct TerminalRenderer: Sendable, Hashable {
    /// Whether ANSI colour escapes are written.
    public let usesColor: Bool
    /// The strings for labels such as "Retry in".
    public var strings: PresentationStrings

    /// Creates a renderer from the environment and whether the output is a terminal.
    ///
    /// - Parameters:
    ///   - environment: The environment variables to read: a non-empty `NO_COLOR`, or `TERM=dumb`, turns colour off.
    ///   - isTerminal: Whether the output is a terminal; colour is used only when it is.
    ///   - strings: The strings for labels such as "Retry in". Default: `.english`.
    public init(environment: [String: String], isTerminal: Bool, strings: PresentationStrings = .english) {
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        usesColor = isTerminal && !noColor && environment["TERM"] != "dumb"
        self.strings = strings
    }

    /// A renderer for this process's standard output (reads the environment and `isatty(1)`).
    public static func standardOutput(strings: PresentationStrings = .english) -> TerminalRenderer {
        var environment: [String: String] = [:]
        for name in ["NO_COLOR", "TERM"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return TerminalRenderer(environment: environment, isTerminal: isatty(1) == 1, strings: strings)
    }

    /// A one-line banner: `✖ Title: message (Retry in 5 minutes) [NET_004]`, coloured by severity; an offline
    /// message (``UserFacingError/isOffline``) starts with `⊘`.
    public func banner(_ error: UserFacingError) -> String {
        let (symbol, color) =
            switch error.severity {
            case _ where error.isOffline: ("⊘", "33")
            case .info: ("ℹ", "36")
            case .warning: ("⚠", "33")
            case .error: ("✖", "31")
            }
        var text = "\(symbol) \(singleLine(error.title)): \(singleLine(error.message))"
        if let retryAfter = error.retryAfter, retryAfter > .zero {
            let time = RelativeTimeFormatter(strings: strings).string(for: retryAfter)
            text += " (" + strings.string("banner.retryIn", ["time": time]) + ")"
        }
        text += " [\(error.code)]"
        return paint(text, color)
    }

    /// A compact aligned table: source, status, items, attempts, breaker, last error.
    public func table(_ rows: [SourceStatusRow]) -> String {
        let header = ["SOURCE", "STATUS", "ITEMS", "ATTEMPTS", "BREAKER", "LAST ERROR"]
        let cells = rows.map { row in
            [
                singleLine(row.source), row.status.rawValue, String(row.items), String(row.attempts),
                row.breakerState?.rawValue ?? "-", row.lastErrorCode?.rawValue ?? "-",
            ]
        }
        var widths = header.map(\.count)
        for line in cells {
            for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func render(_ line: [String]) -> String {
            line.enumerated().map { column, cell in
                column == line.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }
        var lines = [paint(render(header), "1")]
        for (row, line) in zip(rows, cells) {
            let text = render(line)
            lines.append(paint(text, color(for: row)))
        }
        return lines.joined(separator: "\n")
    }

    private func color(for row: SourceStatusRow) -> String {
        switch row.status {
        case .ok: "32"
        case .cached, .skipped: "33"
        case .failed: "31"
        default: "0"
        }
    }

    private func paint(_ text: String, _ code: String) -> String {
        usesColor ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// `text` on one line: line breaks and control characters read as spaces, bidirectional controls are dropped
    /// (``OneLineScalar``), so an entry neither breaks the banner or table nor reorders what follows it.
    private func singleLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.compactMap(OneLineScalar.shown)))
    }
}
