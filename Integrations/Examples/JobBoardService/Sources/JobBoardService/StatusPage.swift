import Foundation

/// The HTML status page (`GET /`): the user-facing message (its action, when it is to try again, a link that
/// reloads the page), the health verdict, one row per source and the jobs, rendered on the server with inline
/// CSS and no scripts. Every text is HTML-escaped, and a job's link
/// is a link only when it is an absolute `http` or `https` URL (``linkTarget(_:)``): the postings come from
/// upstreams, and a `javascript:` or `data:` URL in an `href` would run in the reader's browser.
struct StatusPage {
    var jobs: JobsResponse
    var health: HealthResponse

    var html: String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Job board status</title>
        <style>
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d232b}
        header{background:#1d2a3a;color:#fff;padding:18px 32px}header h1{margin:0;font-size:22px}
        header p{margin:4px 0 0;color:#b9c4d2;font-size:13px}main{padding:20px 32px;max-width:1180px}
        .banner{border-radius:8px;padding:12px 16px;margin-bottom:16px;background:#e8f4ec;border:1px solid #b5dcc1}
        .banner.info{background:#e8f0fb;border-color:#b7cdef}.banner.warning{background:#fff6e0;border-color:#f0d48a}.banner.error{background:#fdecec;border-color:#f1b3b3}
        .banner b{display:block;margin-bottom:2px}.cards{display:flex;gap:12px;margin-bottom:16px}
        .card{background:#fff;border:1px solid #dde2e8;border-radius:8px;padding:10px 16px;min-width:140px}
        .card .v{font-size:22px;font-weight:600}.card .k{color:#5b6775;font-size:12px;text-transform:uppercase}
        table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde2e8;border-radius:8px;margin-bottom:18px}
        th,td{text-align:left;padding:7px 10px;border-bottom:1px solid #eef1f4;font-size:13px;vertical-align:top}
        th{background:#f0f2f5;color:#44505e;font-weight:600}.muted{color:#6b7785}
        .badge{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;font-weight:600}
        .ok{background:#dcf2e3;color:#17643a}.degraded{background:#fff0c7;color:#7a5a00}.bad{background:#fbdada;color:#8e1c1c}
        .closed{background:#e6ebf0;color:#3b4754}.open{background:#fbdada;color:#8e1c1c}.half-open{background:#fff0c7;color:#7a5a00}
        h2{font-size:16px;margin:18px 0 8px}a{color:#1d5fbf}code{font-size:12px}
        </style></head><body>
        <header><h1>Job board — resilience status</h1>
        <p>Six job boards fetched through ResilienceKit's composition root · <a style="color:#9cc3ff" href="/jobs">/jobs</a> · \
        <a style="color:#9cc3ff" href="/metrics">/metrics</a> · <a style="color:#9cc3ff" href="/health">/health</a></p>
        </header><main>
        \(banner)
        <div class="cards">
        \(card("jobs shown", "\(jobs.jobs.count)"))
        \(card("sources delivered", "\(jobs.delivered) of \(jobs.total)"))
        \(card("fetch took", format3(jobs.durationSeconds) + " s"))
        \(card("health", health.status))
        </div>
        <h2>Sources</h2>
        <table><tr><th>source</th><th>simulates</th><th>status</th><th>items</th><th>attempts</th><th>breaker</th>\
        <th>last failure</th></tr>
        \(jobs.sources.map(sourceRow).joined(separator: "\n"))
        </table>
        \(alerts)
        <h2>Jobs</h2>
        <table><tr><th>title</th><th>company</th><th>location</th><th>source</th></tr>
        \(jobs.jobs.prefix(25).map(jobRow).joined(separator: "\n"))
        </table>
        </main></body></html>
        """
    }

    private var banner: String {
        guard let message = jobs.message else {
            return #"<div class="banner"><b>Every source delivered.</b></div>"#
        }
        // An action that tries again is a link to this page: loading it fetches every source anew.
        let action =
            message.suggestedAction.map { text in
                " " + (message.showsRetry ? #"<a href="/">\#(escape(text))</a>"# : escape(text))
            } ?? ""
        return """
            <div class="banner \(escape(message.severity))"><b>\(escape(message.title))</b>\
            \(escape(message.message))\(action) <span class="muted">(\(escape(message.code)))</span></div>
            """
    }

    private var alerts: String {
        guard !health.alerts.isEmpty else { return "" }
        let rows = health.alerts.map { alert in
            let badge = alert.severity == "critical" ? "bad" : alert.severity == "warning" ? "degraded" : "closed"
            return """
                <tr><td><span class="badge \(badge)">\(escape(alert.severity))</span></td>\
                <td><code>\(escape(alert.rule))</code></td><td>\(escape(alert.message))</td></tr>
                """
        }
        return "<h2>Health alerts</h2><table><tr><th>severity</th><th>rule</th><th>message</th></tr>"
            + rows.joined(separator: "\n") + "</table>"
    }

    private func card(_ key: String, _ value: String) -> String {
        #"<div class="card"><div class="k">\#(escape(key))</div><div class="v">\#(escape(value))</div></div>"#
    }

    private func sourceRow(_ source: JobsResponse.SourceEntry) -> String {
        let badge =
            switch source.status {
            case "succeeded": "ok"
            case "served-from-cache", "served-by-fallback": "degraded"
            default: "bad"
            }
        var failure = [source.category, source.code].compactMap { $0 }.joined(separator: " ")
        if let status = source.httpStatus { failure += " HTTP \(status)" }
        return """
            <tr><td><b>\(escape(source.displayName))</b><br><code class="muted">\(escape(source.id))</code></td>\
            <td class="muted">\(escape(source.simulates ?? ""))</td>\
            <td><span class="badge \(badge)">\(escape(source.status))</span></td><td>\(source.items)</td>\
            <td>\(source.attempts)</td><td><span class="badge \(escape(source.breaker))">\(escape(source.breaker))</span>\
            </td><td>\(escape(failure))</td></tr>
            """
    }

    private func jobRow(_ job: JobsResponse.Posting) -> String {
        let title =
            if let target = Self.linkTarget(job.url) {
                #"<a href="\#(escape(target))" rel="noopener noreferrer nofollow">\#(escape(job.title))</a>"#
            } else {
                #"\#(escape(job.title)) <span class="muted">(link withheld: not an http or https URL)</span>"#
            }
        return """
            <tr><td>\(title)</td><td>\(escape(job.company))</td>\
            <td>\(escape(job.location))</td><td><code>\(escape(job.source))</code></td></tr>
            """
    }

    /// `text` as a link target when it is an absolute `http` or `https` URL with a host, normalised by
    /// `URL`; `nil` for any other scheme (`javascript:`, `data:`, `vbscript:` …), for scheme-relative and
    /// relative references, and for text that is not a URL (whitespace or control characters that a browser
    /// would strip to reveal another scheme included).
    static func linkTarget(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url.absoluteString
    }

    private func format3(_ seconds: Double) -> String {
        let milliseconds = Int((seconds * 1_000).rounded())
        let fraction = String(milliseconds % 1_000)
        return "\(milliseconds / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` escaped.
    private func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
