import Foundation
import ResilienceKit

/// The live terminal view of one refresh round: a progress bar, the per-source table (status, items,
/// attempts, breaker, last error) and one "why" line per source that did not deliver live items.
///
/// On a colour terminal it redraws in place; otherwise (`--no-color`, `NO_COLOR`, a pipe) it appends one
/// line per finished source and the table at the end of the round, with no escape sequences.
@MainActor
final class LiveView {
    private let renderer: TerminalRenderer
    private let redraws: Bool
    private var linesOnScreen = 0

    private let columns: Int

    /// `columns` bounds the "why" lines when redrawing in place, so no line wraps and the redraw stays aligned.
    init(renderer: TerminalRenderer, columns: Int) {
        self.renderer = renderer
        redraws = renderer.usesColor
        self.columns = max(40, columns)
    }

    /// Shows the state of a round after a source finished (or before any has).
    func update(
        round: Int, of rounds: Int, rows: [SourceStatusRow], reasons: [String], completed: Int, latest: SourceReport?
    ) {
        let bar = progressBar(completed: completed, total: rows.count)
        let header = "Round \(round)/\(rounds)  \(bar) \(completed)/\(rows.count) sources"
        if redraws {
            var lines = [bold(header)]
            lines += renderer.table(rows).components(separatedBy: "\n")
            lines += reasons.map { "  " + dim(String($0.prefix(columns - 3))) }
            if linesOnScreen > 0 { print("\u{1B}[\(linesOnScreen)F\u{1B}[J", terminator: "") }
            print(lines.joined(separator: "\n"))
            linesOnScreen = lines.count
            fflush(nil)
        } else if let latest {
            print(
                "  [\(completed)/\(rows.count)] \(latest.id): \(latest.status), \(latest.itemCount) jobs, \(latest.attempts) attempts"
            )
        } else {
            print(header)
        }
    }

    /// Ends a round: keeps the final drawing on screen, or prints the table when appending.
    func finish(rows: [SourceStatusRow], reasons: [String], message: String?) {
        if !redraws {
            print(renderer.table(rows))
            for reason in reasons { print("  " + reason) }
        }
        if let message { print(message) }
        print("")
        linesOnScreen = 0
        fflush(nil)
    }

    private func progressBar(completed: Int, total: Int) -> String {
        let width = 24
        let filled = total == 0 ? width : completed * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        return redraws ? "\u{1B}[36m\(bar)\u{1B}[0m" : "[" + bar + "]"
    }

    private func bold(_ text: String) -> String { redraws ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    private func dim(_ text: String) -> String { redraws ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
}

extension SourceStatusRow.Status {
    /// Not finished yet.
    static let waiting: Self = "…"
}

extension SourceReport {
    /// This report as a table row, with the breaker state the telemetry last saw.
    func row(breaker: BreakerState?) -> SourceStatusRow {
        let status: SourceStatusRow.Status =
            switch self.status {
            case .succeeded: .ok
            case .servedFromCache, .servedByFallback: .cached
            case .skippedCircuitOpen: .skipped
            default: .failed
            }
        return SourceStatusRow(
            source: id.rawValue, status: status, items: itemCount, attempts: attempts, breakerState: breaker ?? .closed,
            lastErrorCode: classification?.code)
    }

    /// Why this source did not deliver live items, in one line; nil when it did.
    var reason: String? {
        guard status != .succeeded, let classification else { return nil }
        var text = "\(id): \(status) — \(classification.category) \(classification.code)"
        if let http = classification.httpStatus { text += " HTTP \(http)" }
        if let retryAfter = classification.retryAfter, retryAfter > .zero {
            text += ", retry after \(retryAfter.formattedSeconds)"
        }
        // Circuit-open and bare-status messages only repeat what the line already says.
        if let message = classification.message, !message.isEmpty, classification.category != .circuitOpen,
            message != "HTTP \(classification.httpStatus ?? 0)"
        {
            text += ": " + message.prefix(90)
        }
        if let cacheAge { text += " (cache \(cacheAge.formattedSeconds) old\(isStale ? ", stale" : ""))" }
        return text
    }
}

extension Duration {
    /// `1.25 s`.
    var formattedSeconds: String {
        let (seconds, attoseconds) = components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return String(format: value < 10 ? "%.2f s" : "%.0f s", value)
    }
}
