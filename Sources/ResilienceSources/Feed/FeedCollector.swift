import Foundation
import ResilienceCore

/// The feed reader behind ``FeedParser``, fed the element, namespace and text events of ``XMLTokenizer``:
/// resolves names by namespace URI, tracks `xml:base`, captures the fields of each RSS item or Atom entry
/// with their text kind, and records a ``violation`` for anything the hardening rules forbid (the reader
/// then stops). Used by one parse on one thread.
///
/// Speed: a struct driven through `inout`, not a class, so that its many stored properties are accessed
/// without the runtime's dynamic exclusivity checks (a visible share of a parse when it was a class).
struct FeedCollector {
    typealias Name = FeedVocabulary.Name

    /// How a captured field's text is to be read.
    enum TextKind: Equatable {
        case text
        case html
        case xhtml
        case base64(html: Bool)
    }

    /// The item fields captured, each kept from its first occurrence.
    enum Field: Int, Hashable {
        case title, dcTitle, mediaTitle
        case summary, content, xhtmlBody, dcDescription, itunesSummary, mediaDescription
        case rssLink, guid, atomID
        case pubDate, published, issued03, dctermsIssued, created03, dctermsCreated, dcDate
        case updated, modified03, dctermsModified
        case feedTitle, ttl, updatePeriod, updateFrequency

        /// How many fields there are (the size of a ``FieldTable``).
        static let count = Field.updateFrequency.rawValue + 1
    }

    struct Captured {
        var raw: String
        var kind: TextKind
        var base: URL?
        var attributes: [String: String]
    }

    private struct Capture {
        var field: Field
        var depth: Int
        var kind: TextKind
        var base: URL?
        var attributes: [String: String]
        var buffer = ""
        var full = false
    }

    struct Draft {
        var fields = FieldTable()
        var about = ""
        var alternate: (url: URL, isHTML: Bool)?
        var enclosures: [FeedEnclosure] = []
        /// The URLs in ``enclosures``: the duplicate check stays linear in an item with many of them.
        var enclosureURLs: Set<URL> = []
        var related: [URL] = []
        var warnings: [FeedWarning] = []
    }

    let configuration: FeedParser.Configuration
    let documentURL: URL?
    private(set) var root: Name?
    private(set) var format: FeedDocument.Format?
    private(set) var openElements: [Name] = []
    private(set) var drafts: [Draft] = []
    private(set) var feedFields = FieldTable()
    private(set) var violation: FeedError?
    private(set) var documentEnded = false
    private(set) var sawChannel = false
    private(set) var warnings: [FeedWarning] = []
    private var bases: [URL?] = []
    private var prefixes: [String: [String]] = [:]
    /// The default namespace in scope (`prefixes[""]?.last`, kept apart: it is needed for most elements).
    private var defaultNamespace = ""
    private var reportedPrefixes: Set<String> = []
    private var draft: Draft?
    private var itemDepth = 0
    private var mediaGroupDepth = 0
    private var capture: Capture?

    init(configuration: FeedParser.Configuration, documentURL: URL?) {
        self.configuration = configuration
        self.documentURL = documentURL
    }

    // MARK: Names

    /// `p:local` by the namespace bound to `p`; `local` by the default namespace.
    private mutating func resolve(_ qualifiedName: String) -> Name {
        guard let colon = qualifiedName.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            return Name(defaultNamespace, qualifiedName)
        }
        let local = qualifiedName[qualifiedName.utf8.index(after: colon)...]
        guard colon != qualifiedName.startIndex, !local.isEmpty else { return Name("", qualifiedName) }
        return Name(namespace(ofPrefix: String(qualifiedName[..<colon])), String(local))
    }

    private mutating func namespace(ofPrefix prefix: String) -> String {
        if prefix == "xml" { return FeedVocabulary.xml }
        if let declared = prefixes[prefix]?.last { return declared }
        if !reportedPrefixes.contains(prefix), reportedPrefixes.count < 16 {
            reportedPrefixes.insert(prefix)
            warnings.append(FeedWarning(.undeclaredPrefix, detail: prefix))
        }
        return FeedVocabulary.conventionalPrefixes[prefix] ?? "urn:undeclared:\(prefix)"
    }

    /// Attributes keyed by `namespace|local` for prefixed names and by the local name otherwise.
    private mutating func attribute(_ attributes: [String: String], _ namespace: String, _ local: String) -> String? {
        for (key, value) in attributes {
            guard let colon = key.firstIndex(of: ":") else { continue }
            if key[key.index(after: colon)...] == local, self.namespace(ofPrefix: String(key[..<colon])) == namespace {
                return value
            }
        }
        return nil
    }

    /// An Atom name, or a name in the namespace of an Atom root that declared no Atom namespace.
    private func isAtom(_ name: Name) -> Bool {
        name.isAtom || ((format == .atom || format == .atom03) && root?.namespace == name.namespace)
    }

    // MARK: Events

    /// The document ended well-formed.
    mutating func endDocument() { documentEnded = true }

    /// `prefix` (empty for the default namespace) is bound to `namespaceURI` until the element whose start
    /// tag declared it ends.
    mutating func startMapping(prefix: String, to namespaceURI: String) {
        prefixes[prefix, default: []].append(namespaceURI)
        if prefix.isEmpty { defaultNamespace = namespaceURI }
    }

    /// The binding made by the matching ``startMapping(prefix:to:)`` ends.
    mutating func endMapping(prefix: String) {
        prefixes[prefix]?.removeLast()
        if prefix.isEmpty { defaultNamespace = prefixes[""]?.last ?? "" }
    }

    /// True while text is being captured: other text need not be decoded.
    var isCapturing: Bool { capture != nil }

    /// A start tag, with its attributes keyed by qualified name (namespace declarations excluded).
    mutating func startElement(_ qualifiedName: String, attributes: [String: String]) {
        var name = resolve(qualifiedName)
        if root == nil {
            root = name
            switch (name.namespace, name.local) {
            case (let namespace, "rss") where FeedVocabulary.rssNamespaces.contains(namespace): format = .rss
            case (FeedVocabulary.rdf, "RDF"): format = .rdf
            case (FeedVocabulary.atom, "feed"), ("", "feed"): format = .atom
            case (FeedVocabulary.atom03, "feed"): format = .atom03
            // `feed` in an unknown namespace: Atom, its version told by the `version` attribute.
            case (_, "feed"): format = attributes["version"] == "0.3" ? .atom03 : .atom
            case ("", let local) where local.lowercased() == "channel": format = .cdf
            default:
                abort(FeedError(.notAFeed, detail: "root element <\(qualifiedName)>"))
                return
            }
        }
        // RSS's own elements in another case (`<TiTlE>`, `<PubDate>`) are read as feedparser reads them; only
        // in RSS documents, only outside captured markup, and never a name in any other namespace.
        if capture == nil, format == .rss || format == .rdf, name.isRSS, name.local != "pubDate",
            name.local.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }),
            let canonical = FeedVocabulary.rssElementsByLowercasedName[name.local.lowercased()]
        {
            name.local = canonical
        }
        let parentBase = bases.last ?? documentURL
        var base = parentBase
        if !attributes.isEmpty, let xmlBase = attributes["xml:base"] {
            base =
                URL(string: xmlBase.trimmedFeedWhitespace, relativeTo: parentBase)?.absoluteURL
                ?? parentBase
        }
        let parent = openElements.last
        openElements.append(name)
        bases.append(base)
        let depth = openElements.count
        if depth > configuration.maximumDepth {
            abort(FeedError(.tooDeep, detail: "more than \(configuration.maximumDepth) levels"))
            return
        }
        if capture != nil {
            appendStartTag(name, attributes: attributes)
            return
        }
        if depth == 2, name.local == "channel", name.isRSS { sawChannel = true }
        if draft == nil {
            if isItem(name) {
                if drafts.count >= configuration.maximumItems {
                    abort(FeedError(.tooManyItems, detail: "more than \(configuration.maximumItems) items"))
                    return
                }
                var started = Draft()
                started.about = attribute(attributes, FeedVocabulary.rdf, "about") ?? ""
                draft = started
                itemDepth = depth
                if format == .cdf { cdfItemAttributes(attributes, base: base) }
            } else if let parent, isFeedContainer(parent, depth: depth - 1), let field = feedField(name) {
                begin(field, depth: depth, name: name, attributes: attributes, base: base)
            }
            return
        }
        let isChild = depth == itemDepth + 1 || (mediaGroupDepth > 0 && depth == mediaGroupDepth + 1)
        guard isChild else { return }
        if name.namespace == FeedVocabulary.media, name.local == "group", depth == itemDepth + 1 {
            mediaGroupDepth = depth
            return
        }
        itemElement(name, attributes: attributes, base: base, depth: depth)
    }

    private func isItem(_ name: Name) -> Bool {
        switch format {
        case .rss, .rdf: name.local == "item" && name.isRSS
        case .atom, .atom03: name.local == "entry" && isAtom(name)
        case .cdf: name.namespace.isEmpty && name.local.lowercased() == "item"
        case nil: false
        }
    }

    private func isFeedContainer(_ name: Name, depth: Int) -> Bool {
        switch format {
        case .rss, .rdf: depth == 2 && name.local == "channel" && name.isRSS
        case .atom, .atom03: depth == 1
        case .cdf: depth == 1
        case nil: false
        }
    }

    private func feedField(_ name: Name) -> Field? {
        if format == .cdf {
            return name.namespace.isEmpty && name.local.lowercased() == "title" ? .feedTitle : nil
        }
        return switch (name.namespace, name.local) {
        case (_, "title") where name.isRSS || isAtom(name): .feedTitle
        case (FeedVocabulary.dc, "title"): .feedTitle
        case (_, "ttl") where name.isRSS: .ttl
        case (FeedVocabulary.syndication, "updatePeriod"): .updatePeriod
        case (FeedVocabulary.syndication, "updateFrequency"): .updateFrequency
        default: nil
        }
    }

    private mutating func itemElement(_ name: Name, attributes: [String: String], base: URL?, depth: Int) {
        if format == .cdf {
            guard name.namespace.isEmpty else { return }
            switch name.local.lowercased() {
            case "title": begin(.title, depth: depth, name: name, attributes: attributes, base: base, kind: .html)
            case "abstract":
                begin(.summary, depth: depth, name: name, attributes: attributes, base: base, kind: .html)
            default: break
            }
            return
        }
        let atom = isAtom(name)
        if atom, name.local == "link" {
            atomLink(attributes, base: base)
            return
        }
        if name.isRSS, name.local == "enclosure" {
            enclosure(attributes["url"], type: attributes["type"], length: attributes["length"], base: base)
            return
        }
        if name.namespace == FeedVocabulary.media, name.local == "content" {
            enclosure(attributes["url"], type: attributes["type"], length: attributes["fileSize"], base: base)
            return
        }
        let field: Field
        var kind = TextKind.text
        switch (name.namespace, name.local) {
        case (_, "title") where atom: (field, kind) = (.title, atomKind(attributes))
        case (_, "summary") where atom: (field, kind) = (.summary, atomKind(attributes))
        case (_, "content") where atom:
            guard attributes["src"] == nil else { return }
            (field, kind) = (.content, atomKind(attributes))
        case (_, "id") where atom: field = .atomID
        case (_, "published") where atom: field = .published
        case (_, "updated") where atom: field = .updated
        case (_, "issued") where atom: field = .issued03
        case (_, "created") where atom: field = .created03
        case (_, "modified") where atom: field = .modified03
        case (_, "title") where name.isRSS: (field, kind) = (.title, .html)
        case (_, "description") where name.isRSS: (field, kind) = (.summary, .html)
        case (_, "link") where name.isRSS: field = .rssLink
        case (_, "guid") where name.isRSS: field = .guid
        case (_, "pubDate") where name.isRSS: field = .pubDate
        case (FeedVocabulary.content, "encoded"): (field, kind) = (.content, .html)
        case (FeedVocabulary.xhtml, "body"):
            (field, kind) = (.xhtmlBody, .xhtml)
        case (FeedVocabulary.dc, "title"): (field, kind) = (.dcTitle, .html)
        case (FeedVocabulary.dc, "description"): (field, kind) = (.dcDescription, .html)
        case (FeedVocabulary.dc, "date"): field = .dcDate
        case (FeedVocabulary.dcterms, "issued"): field = .dctermsIssued
        case (FeedVocabulary.dcterms, "created"): field = .dctermsCreated
        case (FeedVocabulary.dcterms, "modified"): field = .dctermsModified
        case (FeedVocabulary.itunes, "summary"): field = .itunesSummary
        case (FeedVocabulary.media, "title"):
            (field, kind) = (.mediaTitle, attributes["type"] == "html" ? .html : .text)
        case (FeedVocabulary.media, "description"):
            (field, kind) = (.mediaDescription, attributes["type"] == "html" ? .html : .text)
        default: return
        }
        begin(field, depth: depth, name: name, attributes: attributes, base: base, kind: kind)
    }

    /// A CDF `ITEM`'s `HREF` (its link) and `LASTMOD` (when it last changed), attribute names in any case.
    private mutating func cdfItemAttributes(_ attributes: [String: String], base: URL?) {
        for (key, value) in attributes {
            switch key.lowercased() {
            case "href":
                if let url = resolveLink(value, base: base) { draft?.alternate = (url, true) }
            case "lastmod":
                draft?.fields[.updated] = Captured(raw: value, kind: .text, base: base, attributes: [:])
            default: break
            }
        }
    }

    /// The text kind of an Atom text construct (1.0 `type`, 0.3 `type` + `mode`); an empty `type` is text.
    private func atomKind(_ attributes: [String: String]) -> TextKind {
        var type = (attributes["type"] ?? "text").trimmedFeedWhitespace.lowercased()
        if type.isEmpty { type = "text" }
        let isHTML = type == "html" || type == "text/html"
        let isXHTML = type == "xhtml" || type == "application/xhtml+xml"
        if let mode = attributes["mode"]?.lowercased() {
            switch mode {
            case "base64": return .base64(html: isHTML || isXHTML)
            case "escaped": return isHTML || isXHTML ? .html : .text
            default: return isHTML || isXHTML ? .xhtml : .text
            }
        }
        if isHTML { return .html }
        if isXHTML || type.hasSuffix("+xml") || type.hasSuffix("/xml") { return .xhtml }
        if type == "text" || type.hasPrefix("text/") { return .text }
        return .base64(html: false)
    }

    private mutating func atomLink(_ attributes: [String: String], base: URL?) {
        guard let href = attributes["href"], let url = resolveLink(href, base: base) else { return }
        var rel = (attributes["rel"] ?? "alternate").trimmedFeedWhitespace.lowercased()
        if rel.hasPrefix("http://www.iana.org/assignments/relation/") {
            rel = String(rel.dropFirst("http://www.iana.org/assignments/relation/".count))
        }
        switch rel {
        case "alternate", "":
            let isHTML = (attributes["type"] ?? "text/html").lowercased().contains("html")
            if draft?.alternate == nil || (draft?.alternate?.isHTML == false && isHTML) {
                draft?.alternate = (url, isHTML)
            }
        case "enclosure":
            enclosure(url, type: attributes["type"], length: attributes["length"])
        case "related":
            draft?.related.append(url)
        default:
            break
        }
    }

    private mutating func enclosure(_ url: String?, type: String?, length: String?, base: URL?) {
        guard let url, let resolved = resolveLink(url, base: base) else { return }
        enclosure(resolved, type: type, length: length)
    }

    /// Adds an enclosure to the item unless one with the same URL is already there (the first one wins).
    private mutating func enclosure(_ url: URL, type: String?, length: String?) {
        guard draft?.enclosureURLs.insert(url).inserted == true else { return }
        draft?.enclosures.append(FeedEnclosure(url: url, type: type, length: length.flatMap { Int($0) }))
    }

    /// `text` as an absolute URL, resolved against `base`; `nil` (with a warning on the item) when it cannot be.
    mutating func resolveLink(_ text: String, base: URL?) -> URL? {
        let (url, unresolvable) = Self.absoluteURL(text, base: base, maximumLength: configuration.maximumFieldLength)
        if let unresolvable, draft != nil {
            draft?.warnings.append(FeedWarning(.unresolvableLink, detail: unresolvable))
        }
        return url
    }

    /// `text` as an absolute URL, resolved against `base`; when it cannot be, `nil` and (unless there was
    /// nothing to resolve) the cleaned text that failed.
    static func absoluteURL(_ text: String, base: URL?, maximumLength: Int) -> (URL?, unresolvable: String?) {
        var unknown: [String] = []
        let cleaned = HTMLEntities.removePlaceholders(text, unknown: &unknown).trimmedFeedWhitespace
        guard !cleaned.isEmpty, cleaned.utf8.count <= maximumLength else { return (nil, nil) }
        let isAbsolute = cleaned.hasPrefix("https://") || cleaned.hasPrefix("http://")
        let url =
            (isAbsolute ? URL(string: cleaned) : URL(string: cleaned, relativeTo: base)?.absoluteURL)
            ?? cleaned.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed.union(["#", "%"]))
            .flatMap { URL(string: $0, relativeTo: base)?.absoluteURL }
        guard let url, let scheme = url.scheme, !scheme.isEmpty else { return (nil, cleaned) }
        return (url, nil)
    }

    private mutating func begin(
        _ field: Field, depth: Int, name: Name, attributes: [String: String], base: URL?, kind: TextKind = .text
    ) {
        let existing = draft == nil ? feedFields[field] : draft?.fields[field]
        guard existing == nil else { return }
        capture = Capture(field: field, depth: depth, kind: kind, base: base, attributes: attributes)
    }

    private mutating func appendStartTag(_ name: Name, attributes: [String: String]) {
        guard let kind = capture?.kind, kind == .xhtml || kind == .html else { return }
        var tag = "<" + name.local
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("xmlns") {
            tag += " \(key)=\"\(HTMLText.escape(value, quotes: true))\""
        }
        append(tag + ">", escaping: false)
    }

    /// The end of the innermost open element.
    mutating func endElement() {
        let depth = openElements.count
        let name = openElements.removeLast()
        bases.removeLast()
        if let open = capture {
            if depth > open.depth {
                if open.kind == .xhtml || open.kind == .html { append("</\(name.local)>", escaping: false) }
                return
            }
            capture = nil
            let captured = Captured(raw: open.buffer, kind: open.kind, base: open.base, attributes: open.attributes)
            if draft != nil { draft?.fields[open.field] = captured } else { feedFields[open.field] = captured }
            return
        }
        if depth == mediaGroupDepth { mediaGroupDepth = 0 }
        if draft != nil, depth == itemDepth, let finished = draft {
            drafts.append(finished)
            draft = nil
        }
    }

    /// Character data (references decoded), from text or a CDATA section.
    mutating func characters(_ string: String) { append(string, escaping: true) }

    private mutating func abort(_ error: FeedError) {
        if violation == nil { violation = error }
    }

    private mutating func append(_ string: String, escaping: Bool) {
        guard let kind = capture?.kind, capture?.full == false, let used = capture?.buffer.utf8.count else { return }
        let text = escaping && kind == .xhtml ? HTMLText.escape(string, quotes: false) : string
        let limit = max(configuration.maximumFieldLength, configuration.maximumSummaryLength) * 4
        if used + text.utf8.count > limit {
            capture?.buffer.append(contentsOf: text.prefix(max(0, limit - used)))
            capture?.full = true
        } else {
            capture?.buffer.append(contentsOf: text)
        }
    }
}
