import Foundation
import ResilienceCore

extension SourceKind {
    /// A job board publishing its openings as CSV.
    public static let csvJobBoard = SourceKind("csv-job-board")
}

/// A third-party source kind: a job board that publishes a CSV file. Imports only ResilienceCore, so any
/// app can register it next to the built-in sources:
///
/// ```swift
/// aggregator.register(CSVJobBoardSource(id: "csv-initech", url: boardURL, transport: transport),
///                     pipeline: pipeline)
/// ```
///
/// It follows the ``Source`` contract: non-2xx throws ``HTTPStatusError``, unreadable bodies throw
/// ``CSVJobBoardError``, cancellation and `context.deadline` are checked before and after the request, and a
/// failure is never an empty list. `query.text` filters titles and companies; `query.limit` caps the count.
public struct CSVJobBoardSource: Source {
    /// The stable identifier.
    public let id: SourceID
    /// ``SourceKind/csvJobBoard``.
    public var kind: SourceKind { .csvJobBoard }
    /// A name for people.
    public let displayName: String
    /// The CSV file's URL.
    public let url: URL
    /// Sends the request.
    public let transport: any HTTPTransport
    /// The bounded parser.
    public let parser: CSVJobBoardParser

    /// Creates a source.
    public init(
        id: SourceID, displayName: String? = nil, url: URL, transport: any HTTPTransport,
        parser: CSVJobBoardParser = CSVJobBoardParser()
    ) {
        self.id = id
        self.displayName = displayName ?? id.rawValue
        self.url = url
        self.transport = transport
        self.parser = parser
    }

    /// Downloads and parses the board.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [CSVJob] {
        try context.checkDeadline()
        let request = HTTPRequest(url: url, headers: ["Accept": "text/csv"])
        let response = try await transport.send(request, context: context)
        try Task.checkCancellation()
        guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
        var jobs = try parser.parse(response.body)
        let needle = query.text.trimmingCharacters(in: .whitespaces)
        if !needle.isEmpty {
            jobs = jobs.filter {
                $0.title.localizedCaseInsensitiveContains(needle) || $0.company.localizedCaseInsensitiveContains(needle)
            }
        }
        if let limit = query.limit { jobs = Array(jobs.prefix(max(0, limit))) }
        return jobs
    }
}
