import Foundation
import ResilienceCore

/// Why a feed could not be read. Every failure of ``FeedParser`` is one of these: never a crash, a hang,
/// unbounded memory, or a silent empty list.
///
/// Classifies itself as ``FailureCategory/invalidResponse`` with code ``FailureCode/malformedFeed``
/// (`PARSE_002`); ``code`` says which rule was broken.
public struct FeedError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// Which rule the input broke. An open set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined codes (`"malformed-xml"`).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// The body is empty or too short to be a feed.
        public static let empty = Code(rawValue: "empty")
        /// The body exceeds ``FeedParser/Configuration-swift.struct/maximumBytes``.
        public static let tooLarge = Code(rawValue: "too-large")
        /// The body declares entities (`<!ENTITY`): refused, so no expansion bomb or external entity can run.
        public static let entityDeclaration = Code(rawValue: "entity-declaration")
        /// The body's encoding is unknown, cannot be converted on this platform, or the body is not valid in
        /// it; ``FeedError/detail`` names the encoding.
        public static let unsupportedEncoding = Code(rawValue: "unsupported-encoding")
        /// The document ends before its elements are closed (a cut-off download).
        public static let truncated = Code(rawValue: "truncated")
        /// The document contains a character XML forbids (a control character, an unpaired surrogate).
        public static let invalidCharacter = Code(rawValue: "invalid-character")
        /// The XML is not well-formed; ``FeedError/detail`` says how.
        public static let malformedXML = Code(rawValue: "malformed-xml")
        /// Elements are not balanced: an end tag closes an element that is not open.
        public static let unbalancedElements = Code(rawValue: "unbalanced-elements")
        /// The root element is neither `rss`, `rdf:RDF` nor Atom's `feed`.
        public static let notAFeed = Code(rawValue: "not-a-feed")
        /// The feed has more items than ``FeedParser/Configuration-swift.struct/maximumItems``.
        public static let tooManyItems = Code(rawValue: "too-many-items")
        /// Elements nest deeper than ``FeedParser/Configuration-swift.struct/maximumDepth``.
        public static let tooDeep = Code(rawValue: "too-deep")
    }

    /// Which rule was broken.
    public var code: Code
    /// What exactly (the parser's message, the offending root element).
    public var detail: String
    /// The line the parser stopped at, when known.
    public var line: Int?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: Which rule was broken.
    ///   - detail: What exactly (the parser's message, the offending root element). Default: `""`. Cut to 200
    ///     characters, `…` marking the cut: it can quote the body (an element name, an encoding label).
    ///   - line: The line the parser stopped at, when known.
    public init(_ code: Code, detail: String = "", line: Int? = nil) {
        self.code = code
        let head = Array(detail.unicodeScalars.prefix(Self.maximumDetailLength + 1))
        self.detail =
            head.count > Self.maximumDetailLength
            ? String(String.UnicodeScalarView(head.prefix(Self.maximumDetailLength - 1))) + "…" : detail
        self.line = line
    }

    /// At most this many characters of ``detail``.
    private static let maximumDetailLength = 200

    /// `invalid-response / PARSE_002`, never transient.
    public var classification: FailureClassification {
        FailureClassification(
            category: .invalidResponse, code: .malformedFeed, isTransient: false, logLevel: .error,
            message: description)
    }

    /// `malformed feed (malformed-xml at line 3): …`.
    public var description: String {
        var text = "malformed feed (\(code)"
        if let line { text += " at line \(line)" }
        text += ")"
        if !detail.isEmpty { text += ": \(detail)" }
        return text
    }
}
