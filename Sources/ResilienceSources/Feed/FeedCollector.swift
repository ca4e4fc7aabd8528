import Foundation
import ResilienceCore

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParser` delegate behind ``FeedParser``: tracks the element stack, collects RSS items and Atom
/// entries, and aborts on anything the hardening rules forbid. Text inside an item field's child elements
/// (inline XHTML in a description) is kept as the field's text. Used by one parse on one thread.
final class FeedCollector: NSObject, XMLParserDelegate {
    enum Format { case rss, atom }

    private struct Draft {
        var title = ""
        var link = ""
        var alternateLink: String?
        var id = ""
        var published = ""
        var updated = ""
        var summary = ""
        var content = ""
    }

    let configuration: FeedParser.Configuration
    let source: SourceID
    private(set) var root: String?
    private(set) var format: Format?
    private(set) var openElements: [String] = []
    private(set) var items: [FeedItem] = []
    private(set) var violation: FeedError?
    private(set) var parseError: (any Error)?
    private(set) var documentEnded = false
    private(set) var sawChannel = false
    private var draft: Draft?
    private var itemDepth = 0
    private var text = ""
    private var textIsFull = false

    init(configuration: FeedParser.Configuration, source: SourceID) {
        self.configuration = configuration
        self.source = source
    }

    func parserDidEndDocument(_ parser: XMLParser) { documentEnded = true }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if root == nil {
            root = elementName
            switch elementName {
            case "rss", "rdf:RDF": format = .rss
            case "feed": format = .atom
            default:
                abort(parser, FeedError(.notAFeed, detail: "root element <\(elementName)>"))
                return
            }
        }
        openElements.append(elementName)
        if elementName == "channel", openElements.count == 2 { sawChannel = true }
        if openElements.count > configuration.maximumDepth {
            abort(parser, FeedError(.tooDeep, detail: "more than \(configuration.maximumDepth) levels"))
            return
        }
        if draft == nil || openElements.count == itemDepth + 1 {
            text = ""
            textIsFull = false
        }
        if draft == nil, elementName == (format == .atom ? "entry" : "item") {
            if items.count >= configuration.maximumItems {
                abort(parser, FeedError(.tooManyItems, detail: "more than \(configuration.maximumItems) items"))
                return
            }
            draft = Draft()
            itemDepth = openElements.count
        } else if draft != nil, openElements.count == itemDepth + 1, elementName == "link",
            let href = attributes["href"]
        {
            let rel = attributes["rel"] ?? "alternate"
            if rel == "alternate", draft?.alternateLink == nil { draft?.alternateLink = href }
            if draft?.link.isEmpty == true { draft?.link = href }
        }
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
    ) {
        guard openElements.last == elementName else {
            abort(
                parser, FeedError(.unbalancedElements, detail: "</\(elementName)> closes <\(openElements.last ?? "")>"))
            return
        }
        let depth = openElements.count
        defer {
            openElements.removeLast()
            if draft == nil || depth <= itemDepth + 1 {
                text = ""
                textIsFull = false
            }
        }
        guard draft != nil else { return }
        if openElements.count == itemDepth {
            finishItem()
        } else if openElements.count == itemDepth + 1 {
            record(elementName)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { append(string) }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        append(String(decoding: block, as: UTF8.self))
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if self.parseError == nil { self.parseError = parseError }
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        if parseError == nil { parseError = validationError }
    }

    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        abort(parser, FeedError(.entityDeclaration, detail: "external entity \(name) refused"))
        return nil
    }

    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
        abort(parser, FeedError(.entityDeclaration, detail: "entity \(name) refused"))
    }

    func parser(
        _ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?
    ) {
        abort(parser, FeedError(.entityDeclaration, detail: "external entity \(name) refused"))
    }

    func parser(
        _ parser: XMLParser, foundUnparsedEntityDeclarationWithName name: String, publicID: String?,
        systemID: String?, notationName: String?
    ) {
        abort(parser, FeedError(.entityDeclaration, detail: "unparsed entity \(name) refused"))
    }

    private func abort(_ parser: XMLParser, _ error: FeedError) {
        if violation == nil { violation = FeedError(error.code, detail: error.detail, line: parser.lineNumber) }
        parser.abortParsing()
    }

    private func append(_ string: String) {
        guard draft != nil, !textIsFull else { return }
        let limit = max(configuration.maximumFieldLength, configuration.maximumSummaryLength) * 4
        if text.utf8.count + string.utf8.count > limit {
            text += string.prefix(max(0, limit - text.utf8.count))
            textIsFull = true
        } else {
            text += string
        }
    }

    private func record(_ element: String) {
        switch element {
        case "title": draft?.title = text
        case "link":
            if draft?.link.isEmpty == true { draft?.link = text.trimmingCharacters(in: .whitespacesAndNewlines) }
        case "guid", "id": draft?.id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        case "pubDate", "published": draft?.published = text
        case "updated", "dc:date": if draft?.updated.isEmpty == true { draft?.updated = text }
        case "description", "summary": draft?.summary = text
        case "content", "content:encoded": draft?.content = text
        default: break
        }
    }

    private func finishItem() {
        guard let finished = draft else { return }
        draft = nil
        let fieldLimit = configuration.maximumFieldLength
        let title = HTMLEntities.collapseWhitespace(HTMLEntities.decode(finished.title), maximumLength: fieldLimit)
        let linkText = String((finished.alternateLink ?? finished.link).prefix(fieldLimit))
        let link = URL(string: linkText).flatMap { $0.scheme == nil ? nil : $0 }
        let summarySource = finished.summary.isEmpty ? finished.content : finished.summary
        let summary = HTMLEntities.plainText(
            fromHTML: summarySource, maximumLength: configuration.maximumSummaryLength)
        let id = [String(finished.id.prefix(fieldLimit)), linkText, title].first { !$0.isEmpty } ?? ""
        let published = FeedDateParser.parse(finished.published) ?? FeedDateParser.parse(finished.updated)
        items.append(FeedItem(title: title, link: link, id: id, published: published, summary: summary, source: source))
    }
}
