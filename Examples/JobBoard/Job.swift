import Foundation
import ResilienceKit

/// One job posting, whatever board it came from.
struct Job: Sendable, Hashable, Codable {
    var title: String
    var company: String
    var location: String
    var url: String
    var source: String
}

/// A Greenhouse-style board: `{"jobs": [{"id", "title", "location": {"name"}, "absolute_url"}]}`.
struct GreenhouseBoard: Decodable, Sendable {
    struct Posting: Decodable, Sendable {
        struct Location: Decodable, Sendable { var name: String }
        var id: Int
        var title: String
        var location: Location
        var absoluteURL: String

        enum CodingKeys: String, CodingKey {
            case id, title, location
            case absoluteURL = "absolute_url"
        }
    }
    var jobs: [Posting]
}

/// A Lever-style board: a top-level array of `{"id", "text", "categories": {"location"}, "hostedUrl"}`.
struct LeverPosting: Decodable, Sendable {
    struct Categories: Decodable, Sendable { var location: String }
    var id: String
    var text: String
    var categories: Categories
    var hostedUrl: String
}

/// A Workable-style board: `{"results": [{"shortcode", "title", "city", "url"}]}`.
struct WorkableBoard: Decodable, Sendable {
    struct Result: Decodable, Sendable {
        var shortcode: String
        var title: String
        var city: String
        var url: String
    }
    var results: [Result]
}
