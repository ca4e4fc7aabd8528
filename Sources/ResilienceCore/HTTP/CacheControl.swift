/// The directives of a `Cache-Control` field (RFC 9111 §5.2), parsed once by the library's one parser of that
/// grammar: `#( token [ "=" ( token / quoted-string ) ] )`.
///
/// Names are compared case-insensitively (kept lowercased); an argument may be sent as a token or a quoted
/// string and is stored unquoted; a member that is not `token [= token / quoted-string]` (whitespace on
/// either side of the `=` included) is skipped. When a directive appears more than once, the first occurrence counts
/// (RFC 9111 §4.2.1). Parsing is bounded: a field longer than ``maximumFieldLength`` bytes or with more
/// than ``maximumDirectiveCount`` directives is rejected with ``CacheControlError``.
public struct CacheControl: Hashable, Sendable {
    /// One directive.
    public struct Directive: Hashable, Sendable {
        /// The lowercased name (`max-age`).
        public var name: String
        /// The unquoted argument, or `nil` for a bare directive.
        public var argument: String?

        /// Creates a directive.
        ///
        /// - Parameters:
        ///   - name: The name; stored lowercased.
        ///   - argument: The unquoted argument, or `nil` for a bare directive.
        public init(name: String, argument: String? = nil) {
            self.name = name.lowercased()
            self.argument = argument
        }
    }

    /// The longest field value parsed, in bytes.
    public static let maximumFieldLength = 16_384
    /// The most directives parsed.
    public static let maximumDirectiveCount = 64
    /// The largest delta-seconds value; larger ones count as this (RFC 9111 §1.2.2).
    public static let maximumDeltaSeconds = 2_147_483_648

    /// The directives in order.
    public var directives: [Directive]

    /// Creates directives from a list.
    ///
    /// - Parameter directives: The directives in order. Default: none.
    public init(directives: [Directive] = []) { self.directives = directives }

    /// Parses a `Cache-Control` field value; several field lines are combined with `", "` first.
    ///
    /// - Parameter fieldValue: The field value (`max-age=600, no-cache="Set-Cookie"`).
    /// - Throws: ``CacheControlError`` when the value is too long or has too many directives.
    public init(parsing fieldValue: some StringProtocol) throws(CacheControlError) {
        let bytes = Array(fieldValue.utf8)
        guard bytes.count <= Self.maximumFieldLength else { throw CacheControlError(.fieldTooLong) }
        var directives: [Directive] = []
        var index = 0
        func skipToNextMember() {
            while index < bytes.count, bytes[index] != 0x2C { index += 1 }
        }
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }
        while index < bytes.count {
            skipWhitespace()
            if index < bytes.count, bytes[index] == 0x2C {
                index += 1
                continue
            }
            guard index < bytes.count else { break }
            let nameStart = index
            while index < bytes.count, Self.isTokenCharacter(bytes[index]) { index += 1 }
            guard index > nameStart else {
                skipToNextMember()
                continue
            }
            let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
            // The grammar has no whitespace around "=": `max-age =60` and `max-age= 60` are members of
            // another shape, skipped below, not `max-age`.
            var argument: String?
            if index < bytes.count, bytes[index] == 0x3D {
                index += 1
                if index < bytes.count, bytes[index] == 0x22 {
                    index += 1
                    var value: [UInt8] = []
                    var closed = false
                    while index < bytes.count {
                        let byte = bytes[index]
                        index += 1
                        if byte == 0x5C, index < bytes.count {
                            value.append(bytes[index])
                            index += 1
                        } else if byte == 0x22 {
                            closed = true
                            break
                        } else {
                            value.append(byte)
                        }
                    }
                    guard closed else { break }
                    argument = String(decoding: value, as: UTF8.self)
                } else {
                    let valueStart = index
                    while index < bytes.count, Self.isTokenCharacter(bytes[index]) { index += 1 }
                    argument = String(decoding: bytes[valueStart..<index], as: UTF8.self)
                }
            }
            skipWhitespace()
            guard index == bytes.count || bytes[index] == 0x2C else {
                skipToNextMember()
                continue
            }
            guard directives.count < Self.maximumDirectiveCount else {
                throw CacheControlError(.tooManyDirectives)
            }
            directives.append(Directive(name: name, argument: argument))
        }
        self.directives = directives
    }

    /// Parses every `Cache-Control` field line of `headers`, or returns `nil` when there is none.
    ///
    /// - Parameter headers: The header fields.
    /// - Throws: ``CacheControlError`` as ``init(parsing:)`` does.
    public init?(headers: HTTPHeaders) throws(CacheControlError) {
        guard let value = headers.combinedValue(for: "Cache-Control") else { return nil }
        try self.init(parsing: value)
    }

    /// True when a directive named `name` is present.
    public func contains(_ name: String) -> Bool { directive(name) != nil }

    /// The first directive named `name` (lowercase), or `nil`.
    public func directive(_ name: String) -> Directive? { directives.first { $0.name == name } }

    /// A delta-seconds argument (RFC 9111 §1.2.2): `nil` when the directive is absent, `0` when its argument
    /// is missing or not a non-negative integer (so a malformed lifetime counts as stale), at most
    /// ``maximumDeltaSeconds``.
    public func deltaSeconds(_ name: String) -> Int? {
        guard let directive = directive(name) else { return nil }
        guard let argument = directive.argument, !argument.isEmpty,
            argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return 0 }
        guard argument.utf8.count <= 10, let value = Int(argument) else { return Self.maximumDeltaSeconds }
        return min(value, Self.maximumDeltaSeconds)
    }

    /// `max-age`, in seconds.
    public var maxAge: Int? { deltaSeconds("max-age") }
    /// `s-maxage`, in seconds (shared caches only).
    public var sharedMaxAge: Int? { deltaSeconds("s-maxage") }
    /// `min-fresh`, in seconds (request).
    public var minFresh: Int? { deltaSeconds("min-fresh") }
    /// `max-stale` (request): `nil` when absent, ``maximumDeltaSeconds`` when bare (any staleness).
    public var maxStale: Int? {
        guard let directive = directive("max-stale") else { return nil }
        return directive.argument == nil ? Self.maximumDeltaSeconds : deltaSeconds("max-stale")
    }
    /// `stale-while-revalidate` (RFC 5861), in seconds.
    public var staleWhileRevalidate: Int? { deltaSeconds("stale-while-revalidate") }
    /// `stale-if-error` (RFC 5861), in seconds.
    public var staleIfError: Int? { deltaSeconds("stale-if-error") }
    /// `no-store`.
    public var noStore: Bool { contains("no-store") }
    /// `no-cache`, with or without a field list.
    public var noCache: Bool { contains("no-cache") }
    /// `must-revalidate`.
    public var mustRevalidate: Bool { contains("must-revalidate") }
    /// `private`, with or without a field list.
    public var isPrivate: Bool { contains("private") }
    /// `public`.
    public var isPublic: Bool { contains("public") }
    /// `only-if-cached` (request).
    public var onlyIfCached: Bool { contains("only-if-cached") }
    /// `immutable` (RFC 8246).
    public var immutable: Bool { contains("immutable") }

    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}

/// Why a `Cache-Control` field value was rejected.
public struct CacheControlError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Reason: RawRepresentable, Hashable, Sendable {
        /// The reason's stable name.
        public let rawValue: String
        /// Creates a reason.
        ///
        /// - Parameter rawValue: The reason's stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Longer than ``CacheControl/maximumFieldLength`` bytes.
        public static let fieldTooLong = Reason(rawValue: "field-too-long")
        /// More than ``CacheControl/maximumDirectiveCount`` directives.
        public static let tooManyDirectives = Reason(rawValue: "too-many-directives")
    }

    /// What went wrong.
    public var reason: Reason

    /// Creates an error.
    ///
    /// - Parameter reason: What went wrong.
    public init(_ reason: Reason) { self.reason = reason }

    /// `Cache-Control: field-too-long`.
    public var description: String { "Cache-Control: \(reason.rawValue)" }
}
