/// Why a structured field could not be parsed or serialised (RFC 9651), and where.
public struct StructuredFieldError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which rule was broken. An open set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined codes (`"invalid-key"`).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// The field ended where more was required (an empty item, a trailing comma, an unclosed string).
        public static let unexpectedEnd = Code(rawValue: "unexpected-end")
        /// A character that the grammar does not allow at this position.
        public static let unexpectedCharacter = Code(rawValue: "unexpected-character")
        /// Characters remain after a complete value.
        public static let trailingCharacters = Code(rawValue: "trailing-characters")
        /// A key that does not start with a lowercase letter or `*`, or contains other characters than
        /// lowercase letters, digits, `_`, `-`, `.` and `*`.
        public static let invalidKey = Code(rawValue: "invalid-key")
        /// An integer or date with more than 15 digits, or a decimal with more than 12 integer or 3 fractional
        /// digits, or a number without digits.
        public static let invalidNumber = Code(rawValue: "invalid-number")
        /// A string with a character outside printable ASCII or a backslash escaping anything but `"` or `\`.
        public static let invalidString = Code(rawValue: "invalid-string")
        /// A token that does not match the token grammar.
        public static let invalidToken = Code(rawValue: "invalid-token")
        /// A byte sequence that is unterminated or not base64.
        public static let invalidByteSequence = Code(rawValue: "invalid-byte-sequence")
        /// A boolean other than `?1` and `?0`.
        public static let invalidBoolean = Code(rawValue: "invalid-boolean")
        /// A date that is not `@` followed by an integer.
        public static let invalidDate = Code(rawValue: "invalid-date")
        /// A display string that is unterminated, badly percent-encoded, or not UTF-8.
        public static let invalidDisplayString = Code(rawValue: "invalid-display-string")
        /// A value to serialise lies outside the range the RFC allows (an integer beyond 15 digits, a decimal
        /// beyond 12 integer digits).
        public static let outOfRange = Code(rawValue: "out-of-range")
    }

    /// Which rule was broken.
    public var code: Code
    /// The byte offset in the field value where parsing stopped; nil for a serialisation error.
    public var offset: Int?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: Which rule was broken.
    ///   - offset: The byte offset in the field value where parsing stopped; nil for a serialisation error.
    public init(_ code: Code, offset: Int? = nil) {
        self.code = code
        self.offset = offset
    }

    /// `invalid-key at byte 4`.
    public var description: String {
        offset.map { "\(code) at byte \($0)" } ?? code.rawValue
    }
}
