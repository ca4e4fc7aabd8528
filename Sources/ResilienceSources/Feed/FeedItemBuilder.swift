import Foundation
import ResilienceCore

/// Turns the fields a ``FeedCollector`` captured into ``FeedItem``s: precedence between elements, text
/// kinds, links, ids, dates and the warnings for what was lost.
struct FeedItemBuilder {
    typealias Field = FeedCollector.Field

    let configuration: FeedParser.Configuration
    let source: SourceID
    let collector: FeedCollector

    static let titleOrder: [Field] = [.title, .dcTitle, .mediaTitle]
    static let summaryOrder: [Field] = [
        .summary, .content, .xhtmlBody, .dcDescription, .itunesSummary, .mediaDescription,
    ]
    static let publishedOrder: [Field] = [
        .pubDate, .published, .issued03, .dctermsIssued, .created03, .dctermsCreated, .dcDate,
    ]
    static let updatedOrder: [Field] = [.updated, .modified03, .dctermsModified]

    func item(_ draft: FeedCollector.Draft) -> FeedItem {
        var warnings = draft.warnings
        let fieldLimit = configuration.maximumFieldLength
        var title = ""
        for field in Self.titleOrder {
            guard let captured = draft.fields[field] else { continue }
            title = plainText(captured, limit: fieldLimit, warnings: &warnings)
            if !title.isEmpty { break }
        }
        var summary = ""
        var summaryHTML = ""
        for field in Self.summaryOrder {
            guard let captured = draft.fields[field] else { continue }
            let (kind, raw) = readable(captured, warnings: &warnings)
            summary = plain(raw, kind: kind, limit: configuration.maximumSummaryLength)
            summaryHTML =
                kind == .text
                ? HTMLText.escape(String(summary), quotes: false)
                : HTMLText.sanitizedHTML(raw, maximumLength: configuration.maximumSummaryLength)
            if !summary.isEmpty { break }
        }
        let guid = draft.fields[.guid].map { text($0, warnings: &warnings) } ?? ""
        var link = draft.fields[.rssLink].flatMap { captured -> URL? in
            let value = text(captured, warnings: &warnings)
            guard !value.isEmpty else { return nil }
            let (url, unresolvable) = FeedCollector.absoluteURL(
                value, base: captured.base, maximumLength: configuration.maximumFieldLength)
            if let unresolvable { warnings.append(FeedWarning(.unresolvableLink, detail: unresolvable)) }
            return url
        }
        link = link ?? draft.alternate?.url
        if link == nil, let captured = draft.fields[.guid],
            captured.attributes["isPermaLink"]?.lowercased() != "false",
            let url = URL(string: guid), ["http", "https"].contains(url.scheme?.lowercased() ?? "")
        {
            link = url
        }
        let atomID = draft.fields[.atomID].map { text($0, warnings: &warnings) } ?? ""
        let linkText = link.map { String($0.absoluteString.prefix(fieldLimit)) } ?? ""
        let published = date(Self.publishedOrder, draft, warnings: &warnings)
        let updated = date(Self.updatedOrder, draft, warnings: &warnings)
        let id =
            [atomID, guid, draft.about.trimmedFeedWhitespace, linkText, title]
            .first { !$0.isEmpty }.map { String($0.prefix(fieldLimit)) }
            ?? Self.contentID(
                summary: summary, dates: [published, updated], enclosures: draft.enclosures.map(\.url.absoluteString))
        return FeedItem(
            title: title, link: link, id: id, published: published ?? updated, updated: updated, summary: summary,
            summaryHTML: summaryHTML, enclosures: draft.enclosures, related: draft.related, warnings: warnings,
            source: source)
    }

    /// The id of an item that has no id, link or title (RSS allows an item with only a description):
    /// `digest:` and a 64-bit FNV-1a hash of its summary, dates and enclosure URLs, so that the same item
    /// keeps its id from one fetch to the next and different items differ.
    static func contentID(summary: String, dates: [Date?], enclosures: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            hash ^= 0xff
            hash = hash &* 0x100_0000_01b3
        }
        mix(summary)
        for date in dates { mix(date.map { "\($0.timeIntervalSince1970)" } ?? "") }
        for url in enclosures { mix(url) }
        let hex = String(hash, radix: 16)
        return "digest:" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    func feedTitle() -> String {
        var ignored: [FeedWarning] = []
        return collector.feedFields[.feedTitle].map {
            plainText($0, limit: configuration.maximumFieldLength, warnings: &ignored)
        } ?? ""
    }

    /// RSS `ttl` (minutes), else `sy:updatePeriod` ÷ `sy:updateFrequency`.
    func pollingInterval() -> Duration? {
        var ignored: [FeedWarning] = []
        if let ttl = collector.feedFields[.ttl].map({ text($0, warnings: &ignored) }), let minutes = Int(ttl),
            minutes > 0, minutes <= 525_600
        {
            return .seconds(minutes * 60)
        }
        guard let period = collector.feedFields[.updatePeriod].map({ text($0, warnings: &ignored).lowercased() })
        else { return nil }
        let seconds: Int
        switch period {
        case "hourly": seconds = 3_600
        case "daily": seconds = 86_400
        case "weekly": seconds = 604_800
        case "monthly": seconds = 2_592_000
        case "yearly": seconds = 31_536_000
        default: return nil
        }
        let frequency = collector.feedFields[.updateFrequency].flatMap { Int(text($0, warnings: &ignored)) } ?? 1
        guard frequency > 0 else { return nil }
        return .seconds(seconds / min(frequency, seconds))
    }

    private func date(_ order: [Field], _ draft: FeedCollector.Draft, warnings: inout [FeedWarning]) -> Date? {
        for field in order {
            guard let captured = draft.fields[field] else { continue }
            let value = text(captured, warnings: &warnings)
            if value.isEmpty { continue }
            switch FeedDateParser.interpret(value) {
            case .date(let date): return date
            case .zoneAssumed(let date):
                warnings.append(FeedWarning(.dateWithoutZone, detail: value))
                return date
            case .ambiguous(let reason):
                warnings.append(FeedWarning(.ambiguousDate, detail: "\(value): \(reason)"))
            case .unrecognized:
                warnings.append(FeedWarning(.unreadableDate, detail: String(value.prefix(64))))
            }
        }
        return nil
    }

    /// A field read as a short plain value (ids, links, dates): placeholders removed, whitespace trimmed.
    private func text(_ captured: FeedCollector.Captured, warnings: inout [FeedWarning]) -> String {
        var unknown: [String] = []
        let value = HTMLEntities.removePlaceholders(captured.raw, unknown: &unknown)
        record(unknown, in: &warnings)
        return value.trimmedFeedWhitespace
    }

    private func plainText(_ captured: FeedCollector.Captured, limit: Int, warnings: inout [FeedWarning]) -> String {
        let (kind, raw) = readable(captured, warnings: &warnings)
        return plain(raw, kind: kind, limit: limit)
    }

    /// Plain text of `raw`: markup (and script/style content) removed from every kind, so that markup-like
    /// text in a `text` field never shows up as markup either.
    private func plain(_ raw: String, kind: FeedCollector.TextKind, limit: Int) -> String {
        switch kind {
        case .text:
            HTMLText.markupFreeText(fromHTML: HTMLText.escapingAmpersands(raw), maximumLength: limit)
        default: HTMLText.markupFreeText(fromHTML: raw, maximumLength: limit)
        }
    }

    /// The field's text with placeholders removed and base64 decoded; the kind becomes text or HTML.
    private func readable(
        _ captured: FeedCollector.Captured, warnings: inout [FeedWarning]
    ) -> (FeedCollector.TextKind, String) {
        var unknown: [String] = []
        let raw = HTMLEntities.removePlaceholders(captured.raw, unknown: &unknown)
        record(unknown, in: &warnings)
        guard case .base64(let isHTML) = captured.kind else { return (captured.kind, raw) }
        guard let data = Data(base64Encoded: raw, options: .ignoreUnknownCharacters) else {
            warnings.append(FeedWarning(.invalidBase64, detail: "\(raw.utf8.count) characters"))
            return (.text, "")
        }
        return (isHTML ? .html : .text, String(decoding: data, as: UTF8.self))
    }

    private func record(_ unknown: [String], in warnings: inout [FeedWarning]) {
        guard !unknown.isEmpty else { return }
        // A set, not a search of the array per name: a field can hold thousands of distinct unknown names.
        var seen = Set(warnings)
        for name in unknown {
            let detail = name.first == "#" ? "&\(name); is not an XML character" : "&\(name);"
            let warning = FeedWarning(.unknownEntity, detail: detail)
            if seen.insert(warning).inserted { warnings.append(warning) }
        }
    }
}
