/// Something a feed got wrong that did not cost the feed: what was lost or guessed, on the item (or the
/// feed) it concerns.
public struct FeedWarning: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What kind of problem. An open set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined codes (`"unreadable-date"`).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// An undeclared named entity (`&bogus;`) or a reference to a character XML forbids: the text it
        /// stood for is missing.
        public static let unknownEntity = Code(rawValue: "unknown-entity")
        /// A date that is not in any form the date parser knows: the item has no date from it.
        public static let unreadableDate = Code(rawValue: "unreadable-date")
        /// A date whose instant cannot be known (an ambiguous zone or day/month order): left out.
        public static let ambiguousDate = Code(rawValue: "ambiguous-date")
        /// A date with a time but no zone, read as UTC.
        public static let dateWithoutZone = Code(rawValue: "date-without-zone")
        /// The body was not valid in the encoding it declared or was assumed to have; it was read as
        /// Windows-1252.
        public static let invalidEncoding = Code(rawValue: "invalid-encoding")
        /// A bare `&` that begins no reference, read as a literal ampersand.
        public static let bareAmpersand = Code(rawValue: "bare-ampersand")
        /// A namespace prefix used without a declaration, resolved by its conventional meaning.
        public static let undeclaredPrefix = Code(rawValue: "undeclared-prefix")
        /// Base64 content that does not decode: left out.
        public static let invalidBase64 = Code(rawValue: "invalid-base64")
        /// A link that is neither absolute nor resolvable against a base: left out.
        public static let unresolvableLink = Code(rawValue: "unresolvable-link")
    }

    /// What kind of problem.
    public var code: Code
    /// What exactly (the entity's name, the date's text …).
    public var detail: String

    /// Creates a warning.
    /// - Parameters:
    ///   - code: What kind of problem.
    ///   - detail: What exactly.
    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `unknown-entity: &bogus;`.
    public var description: String { "\(code): \(detail)" }
}
