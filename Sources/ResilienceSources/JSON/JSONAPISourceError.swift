import ResilienceCore

/// A JSON API response that arrived (2xx) but could not be used.
///
/// Classifies itself as ``FailureCategory/invalidResponse``; decoding failures carry
/// ``FailureCode/decodingFailed`` (`PARSE_003`).
public struct JSONAPISourceError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. An open set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined codes (`"decoding-failed"`).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// The body did not decode into the expected type.
        public static let decodingFailed = Code(rawValue: "decoding-failed")
    }

    /// What went wrong.
    public var code: Code
    /// The source.
    public var source: SourceID
    /// Where and why (coding path and reason; never the body itself).
    public var detail: String
    /// The page index it happened on.
    public var pageIndex: Int

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - source: The source that failed.
    ///   - detail: Where and why (coding path and reason; never the body itself).
    ///   - pageIndex: The page index it happened on. Default: `0`.
    public init(_ code: Code, source: SourceID, detail: String, pageIndex: Int = 0) {
        self.code = code
        self.source = source
        self.detail = detail
        self.pageIndex = pageIndex
    }

    /// `invalid-response / PARSE_003`, not transient.
    public var classification: FailureClassification {
        FailureClassification(
            category: .invalidResponse, code: code == .decodingFailed ? .decodingFailed : .invalidFormat,
            isTransient: false, logLevel: .error, message: description)
    }

    /// `decoding-failed [greenhouse-acme] page 0: …`.
    public var description: String { "\(code) [\(source)] page \(pageIndex): \(detail)" }
}
