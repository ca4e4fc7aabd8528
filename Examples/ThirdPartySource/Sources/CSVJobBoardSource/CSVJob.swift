import Foundation

/// One row of a CSV job board.
public struct CSVJob: Hashable, Sendable, Codable {
    /// The job title.
    public var title: String
    /// The hiring company.
    public var company: String
    /// Where (`"Remote"`, `"Berlin"`).
    public var location: String
    /// The posting's URL, if valid.
    public var url: URL?

    /// Creates a job.
    public init(title: String, company: String, location: String, url: URL?) {
        self.title = title
        self.company = company
        self.location = location
        self.url = url
    }
}
