import Foundation
import ResilienceCore

/// A ``Source`` reading a JSON HTTP API (Greenhouse-, Lever-style boards) over an injected ``HTTPTransport``.
///
/// - An endpoint builder turns the query and page into an ``HTTPRequest``.
/// - Optional, always bounded pagination (``JSONAPIPagination``): page numbers or cursors.
/// - Optional "404 means no items" (``notFoundMeansEmpty``), for boards that answer 404 when a company has no
///   openings. Any other non-2xx status throws ``HTTPStatusError`` for a classifier to classify.
/// - Bodies that do not decode throw ``JSONAPISourceError`` with code `decodingFailed`.
/// - Checks cancellation and `context.deadline` before every request; `query.limit` stops paging early.
///
/// ```swift
/// let acme = JSONAPISource<Job>(id: "greenhouse-acme", transport: transport, notFoundMeansEmpty: true,
///     envelope: GreenhouseJobs.self, items: \.jobs) { query, _ in
///     HTTPRequest(url: URL(string: "https://boards.example.com/v1/boards/acme/jobs")!)
/// }
/// ```
public struct JSONAPISource<Item: Decodable & Sendable>: Source {
    /// The stable identifier.
    public let id: SourceID
    /// ``SourceKind/jsonAPI`` unless given.
    public let kind: SourceKind
    /// A name for people.
    public let displayName: String
    /// Sends requests.
    public let transport: any HTTPTransport
    /// How pages are walked.
    public let pagination: JSONAPIPagination
    /// Whether a 404 means "no items" rather than a failure.
    public let notFoundMeansEmpty: Bool
    /// Builds the request for a query and page.
    public let endpoint: @Sendable (SourceQuery, JSONAPIPage) throws -> HTTPRequest
    /// Decodes one response body.
    public let decode: @Sendable (Data) throws -> JSONAPIPageContent<Item>

    /// Creates a source with a custom page decoder.
    ///
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind. Default: ``SourceKind/jsonAPI``.
    ///   - displayName: A name for people; the identifier's raw value when `nil`.
    ///   - transport: Sends requests.
    ///   - pagination: How pages are walked. Default: `.single`.
    ///   - notFoundMeansEmpty: Whether a 404 means "no items" rather than a failure. Default: `false`.
    ///   - decode: Decodes one response body.
    ///   - endpoint: Builds the request for a query and page.
    public init(
        id: SourceID, kind: SourceKind = .jsonAPI, displayName: String? = nil, transport: any HTTPTransport,
        pagination: JSONAPIPagination = .single, notFoundMeansEmpty: Bool = false,
        decode: @escaping @Sendable (Data) throws -> JSONAPIPageContent<Item>,
        endpoint: @escaping @Sendable (SourceQuery, JSONAPIPage) throws -> HTTPRequest
    ) {
        self.id = id
        self.kind = kind
        self.displayName = displayName ?? id.rawValue
        self.transport = transport
        self.pagination = pagination
        self.notFoundMeansEmpty = notFoundMeansEmpty
        self.decode = decode
        self.endpoint = endpoint
    }

    /// Creates a source whose responses are a top-level JSON array of items.
    ///
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind. Default: ``SourceKind/jsonAPI``.
    ///   - displayName: A name for people; the identifier's raw value when `nil`.
    ///   - transport: Sends requests.
    ///   - pagination: How pages are walked. Default: `.single`.
    ///   - notFoundMeansEmpty: Whether a 404 means "no items" rather than a failure. Default: `false`.
    ///   - makeDecoder: Makes the decoder for each response (set date and key strategies here). Default: a plain
    ///     `JSONDecoder`.
    ///   - endpoint: Builds the request for a query and page.
    public init(
        id: SourceID, kind: SourceKind = .jsonAPI, displayName: String? = nil, transport: any HTTPTransport,
        pagination: JSONAPIPagination = .single, notFoundMeansEmpty: Bool = false,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() },
        endpoint: @escaping @Sendable (SourceQuery, JSONAPIPage) throws -> HTTPRequest
    ) {
        self.init(
            id: id, kind: kind, displayName: displayName, transport: transport, pagination: pagination,
            notFoundMeansEmpty: notFoundMeansEmpty,
            decode: { data in JSONAPIPageContent(items: try makeDecoder().decode([Item].self, from: data)) },
            endpoint: endpoint)
    }

    /// Creates a source whose responses are an envelope object holding the items (and maybe a cursor).
    ///
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind. Default: ``SourceKind/jsonAPI``.
    ///   - displayName: A name for people; the identifier's raw value when `nil`.
    ///   - transport: Sends requests.
    ///   - pagination: How pages are walked. Default: `.single`.
    ///   - notFoundMeansEmpty: Whether a 404 means "no items" rather than a failure. Default: `false`.
    ///   - makeDecoder: Makes the decoder for each response (set date and key strategies here). Default: a plain
    ///     `JSONDecoder`.
    ///   - envelope: The type of the response's top-level object.
    ///   - items: Reads the page's items from the decoded envelope.
    ///   - nextCursor: Reads the cursor of the next page, for cursor pagination. Default: none.
    ///   - hasMore: Reads whether more pages follow, when the API says so. Default: unknown (`nil`).
    ///   - endpoint: Builds the request for a query and page.
    public init<Envelope: Decodable & Sendable>(
        id: SourceID, kind: SourceKind = .jsonAPI, displayName: String? = nil, transport: any HTTPTransport,
        pagination: JSONAPIPagination = .single, notFoundMeansEmpty: Bool = false,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() },
        envelope: Envelope.Type,
        items: @escaping @Sendable (Envelope) -> [Item],
        nextCursor: @escaping @Sendable (Envelope) -> String? = { _ in nil },
        hasMore: @escaping @Sendable (Envelope) -> Bool? = { _ in nil },
        endpoint: @escaping @Sendable (SourceQuery, JSONAPIPage) throws -> HTTPRequest
    ) {
        self.init(
            id: id, kind: kind, displayName: displayName, transport: transport, pagination: pagination,
            notFoundMeansEmpty: notFoundMeansEmpty,
            decode: { data in
                let decoded = try makeDecoder().decode(Envelope.self, from: data)
                return JSONAPIPageContent(
                    items: items(decoded), nextCursor: nextCursor(decoded), hasMore: hasMore(decoded))
            },
            endpoint: endpoint)
    }

    /// Fetches every page (within the bounds) and returns the items in order.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item] {
        var items: [Item] = []
        var page = JSONAPIPage(index: 0, number: pagination.firstPageNumber)
        var seenCursors = Set<String>()
        while page.index < pagination.maximumPages {
            try context.checkDeadline()
            let request = try endpoint(query, page)
            let response = try await transport.send(request, context: context)
            try Task.checkCancellation()
            if response.status == 404, notFoundMeansEmpty { break }
            guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
            let content: JSONAPIPageContent<Item>
            do {
                content = try decode(response.body)
            } catch {
                if CancellationDetection.isCancellation(error) { throw error }
                throw JSONAPISourceError(
                    .decodingFailed, source: id, detail: Self.describe(error), pageIndex: page.index)
            }
            items.append(contentsOf: content.items)
            if let limit = query.limit, items.count >= limit {
                items.removeLast(items.count - max(0, limit))
                break
            }
            switch pagination.style {
            case .pageNumbers:
                // No page follows `Int.max`: the fetch ends there, as at `maximumPages`.
                if content.items.isEmpty || content.hasMore == false || page.number == .max { return items }
                page.number += 1
            case .cursor:
                guard content.hasMore != false, let next = content.nextCursor, !next.isEmpty,
                    seenCursors.insert(next).inserted
                else { return items }
                page.cursor = next
            default:
                return items
            }
            page.index += 1
        }
        return items
    }

    /// At most this many characters of one coding-path key reach the detail.
    private static var maximumKeyLength: Int { 64 }
    /// At most this many characters of the coding path, and as many of the reason, reach the detail.
    private static var maximumPartLength: Int { 200 }

    /// A decoding error's coding path and reason, without the body. Keys and reasons can quote the body (a
    /// dictionary's keys are the body's), so control characters are dropped, each key is cut to 64 characters
    /// and the path and the reason to 200 each.
    private static func describe(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            var keys = ""
            for key in context.codingPath {
                keys += key.intValue.map { "[\($0)]" } ?? "." + clip(key.stringValue, to: maximumKeyLength)
                if keys.unicodeScalars.count > maximumPartLength { break }
            }
            return (keys.isEmpty ? "root" : clip(keys, to: maximumPartLength)) + ": "
                + clip(context.debugDescription, to: maximumPartLength)
        }
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            return path(context)
        default:
            return clip(String(describing: error), to: maximumPartLength)
        }
    }

    /// `text` without control characters, cut to `limit` characters with `…` marking the cut.
    private static func clip(_ text: String, to limit: Int) -> String {
        let visible = text.unicodeScalars.lazy.filter { !CharacterSet.controlCharacters.contains($0) }
        let head = Array(visible.prefix(limit + 1))
        guard head.count > limit else { return String(String.UnicodeScalarView(head)) }
        return String(String.UnicodeScalarView(head.prefix(limit - 1))) + "…"
    }
}
