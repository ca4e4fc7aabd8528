/// Removes secrets from text and headers before anything is stored, logged or exported.
///
/// It recognises, case-insensitively:
/// - credential headers (`Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-API-Key` …),
///   both in ``HTTPHeaders`` and as `Name: value` text (the rest of the line is redacted);
/// - `Bearer`/`Basic` credentials anywhere in text;
/// - secret-looking `name=value` pairs in URLs, query strings and form bodies (`api_key`, `apikey`, `key`,
///   `token`, `access_token`, `refresh_token`, `password`, `secret`, `client_secret`, `signature`, `sig`,
///   `session`, and any name containing `token`, `secret`, `password` or `signature`, such as a presigned URL's
///   `X-Amz-Signature` or `X-Goog-Signature`);
/// - user information in URLs (`https://user:pass@host`).
///
/// Redaction replaces the secret with ``replacement`` and keeps the rest, so logs stay useful. Text without
/// `=`, `:`, `@` or a word starting `be…`/`ba…` is returned unchanged after one pass, without copying.
public struct Redactor: Sendable, Hashable {
    /// What replaces a secret.
    public var replacement: String
    /// Header names (lowercased) whose values are always redacted.
    public var sensitiveHeaders: Set<String>
    /// Parameter names (lowercased) whose values are always redacted.
    public var sensitiveParameters: Set<String>
    /// Fragments that make any parameter name sensitive when it contains one (lowercased).
    public var sensitiveFragments: [String] {
        didSet { fragmentBytes = sensitiveFragments.map { Array($0.utf8) } }
    }
    private var fragmentBytes: [[UInt8]]

    /// Creates a redactor; the defaults cover the common credential carriers.
    ///
    /// - Parameters:
    ///   - replacement: What replaces a secret. Default: `"[REDACTED]"`.
    ///   - sensitiveHeaders: Header names (lowercased) whose values are always redacted. Default:
    ///     `Redactor.defaultSensitiveHeaders`.
    ///   - sensitiveParameters: Parameter names (lowercased) whose values are always redacted. Default:
    ///     `Redactor.defaultSensitiveParameters`.
    ///   - sensitiveFragments: Fragments that make any parameter name sensitive when it contains one (lowercased).
    public init(
        replacement: String = "[REDACTED]",
        sensitiveHeaders: Set<String> = Redactor.defaultSensitiveHeaders,
        sensitiveParameters: Set<String> = Redactor.defaultSensitiveParameters,
        sensitiveFragments: [String] = [
            "token", "secret", "password", "passwd", "apikey", "api_key", "api-key", "signature",
        ]
    ) {
        self.replacement = replacement
        self.sensitiveHeaders = sensitiveHeaders
        self.sensitiveParameters = sensitiveParameters
        self.sensitiveFragments = sensitiveFragments
        self.fragmentBytes = sensitiveFragments.map { Array($0.utf8) }
    }

    /// The standard redactor.
    public static let standard = Redactor()

    /// Header names redacted by default.
    public static let defaultSensitiveHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token",
        "x-access-token", "x-csrf-token", "x-amz-security-token",
    ]

    /// Parameter names redacted by default.
    public static let defaultSensitiveParameters: Set<String> = [
        "api_key", "apikey", "api-key", "key", "token", "access_token", "refresh_token", "id_token", "password",
        "pass", "pwd", "secret", "client_secret", "signature", "sig", "session", "sessionid", "session_id", "auth",
    ]

    /// `headers` with every sensitive header's value replaced.
    public func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(
            headers.fields.map { field in
                if isSensitiveHeader(field.name) {
                    return HTTPHeaders.Field(name: field.name, value: replacement)
                }
                return HTTPHeaders.Field(name: field.name, value: redact(field.value))
            })
    }

    /// `text` with every recognised secret replaced.
    public func redact(_ text: String) -> String {
        guard Self.mightContainSecret(text) else { return text }
        var scanner = RedactionScanner(input: Array(text.utf8), redactor: self)
        return scanner.run()
    }

    /// One pass over the bytes: true when `text` has `=`, `:`, `@`, or a `bearer`/`basic ` scheme word.
    static func mightContainSecret(_ text: String) -> Bool {
        var previous: UInt8 = 0
        var schemeProgress = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
                return true
            default:
                let lower = byte | 0x20
                // Tracks "bearer" / "basic" loosely: a 'b' followed by 'e' or 'a' is enough to scan properly.
                if schemeProgress == 1 && (lower == UInt8(ascii: "e") || lower == UInt8(ascii: "a")) { return true }
                schemeProgress = lower == UInt8(ascii: "b") && !isWordByte(previous) ? 1 : 0
            }
            previous = byte
        }
        return false
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        let lower = byte | 0x20
        return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// `text` with secrets replaced, or `nil` for `nil`.
    public func redact(_ text: String?) -> String? {
        guard let text else { return nil }
        return redact(text)
    }

    /// `classification` with its free-form message redacted.
    public func redact(_ classification: FailureClassification) -> FailureClassification {
        var copy = classification
        copy.message = redact(classification.message)
        return copy
    }

    /// `event` with its free-form fields redacted.
    public func redact(_ event: ResilienceEvent) -> ResilienceEvent {
        var copy = event
        copy.key = redact(event.key)
        copy.operation = redact(event.operation)
        copy.detail = redact(event.detail)
        if let classification = event.classification { copy.classification = redact(classification) }
        return copy
    }

    func isSensitiveHeader(_ name: String) -> Bool {
        sensitiveHeaders.contains(Self.asciiLowercased(name))
    }

    func isSensitiveParameter(_ name: String) -> Bool {
        let lowered = Self.asciiLowercased(name)
        if sensitiveParameters.contains(lowered) { return true }
        let bytes = Array(lowered.utf8)
        return fragmentBytes.contains { Self.bytes(bytes, contain: $0) }
    }

    private static func asciiLowercased(_ text: String) -> String {
        String(
            decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self
        )
    }

    private static func bytes(_ haystack: [UInt8], contain needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
        outer: for start in 0...(haystack.count - needle.count) {
            for offset in 0..<needle.count where haystack[start + offset] != needle[offset] { continue outer }
            return true
        }
        return false
    }
}

/// A single pass over UTF-8 bytes that copies the input and replaces secrets.
private struct RedactionScanner {
    let input: [UInt8]
    let redactor: Redactor
    var output: [UInt8] = []

    init(input: [UInt8], redactor: Redactor) {
        self.input = input
        self.redactor = redactor
        output.reserveCapacity(input.count)
    }

    mutating func run() -> String {
        var index = 0
        while index < input.count {
            if let next = redactScheme(at: index) ?? redactAfterSeparator(at: index) ?? redactUserInfo(at: index) {
                index = next
            } else {
                output.append(input[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `Bearer <token>` / `Basic <token>` at a word start.
    private static let schemes: [[UInt8]] = [Array("bearer ".utf8), Array("basic ".utf8)]

    private mutating func redactScheme(at index: Int) -> Int? {
        guard lowercase(input[index]) == UInt8(ascii: "b"), index == 0 || !isNameByte(input[index - 1]) else {
            return nil
        }
        for scheme in Self.schemes where matches(scheme, at: index) {
            var end = index + scheme.count
            while end < input.count && input[end] == UInt8(ascii: " ") { end += 1 }
            let tokenStart = end
            while end < input.count && isTokenByte(input[end]) { end += 1 }
            guard end > tokenStart else { return nil }
            output.append(contentsOf: input[index..<tokenStart])
            output.append(contentsOf: Array(redactor.replacement.utf8))
            return end
        }
        return nil
    }

    /// `name=value` and `Header: value` where the name is sensitive.
    private mutating func redactAfterSeparator(at index: Int) -> Int? {
        let byte = input[index]
        guard byte == UInt8(ascii: "=") || byte == UInt8(ascii: ":") else { return nil }
        var nameStart = index
        while nameStart > 0 && isNameByte(input[nameStart - 1]) { nameStart -= 1 }
        guard nameStart < index else { return nil }
        let name = String(decoding: input[nameStart..<index].filter { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
        if byte == UInt8(ascii: ":") {
            guard redactor.isSensitiveHeader(name) || (quoted(nameStart, index) && redactor.isSensitiveParameter(name))
            else { return nil }
            // The value runs to the end of the line (a header) or the closing quote (a JSON-ish field).
            output.append(byte)
            var start = index + 1
            while start < input.count && (input[start] == UInt8(ascii: " ") || input[start] == UInt8(ascii: "\"")) {
                output.append(input[start])
                start += 1
            }
            var end = start
            let stopsAtQuote = start > index + 1 && input[start - 1] == UInt8(ascii: "\"")
            while end < input.count && input[end] != UInt8(ascii: "\n") && input[end] != UInt8(ascii: "\r")
                && !(stopsAtQuote && input[end] == UInt8(ascii: "\""))
            {
                end = stopsAtQuote ? skippingEscape(at: end) : end + 1
            }
            output.append(contentsOf: Array(redactor.replacement.utf8))
            return end
        }
        guard redactor.isSensitiveParameter(name) else { return nil }
        output.append(byte)
        var end = index + 1
        if end < input.count && input[end] == UInt8(ascii: "\"") {
            output.append(input[end])
            end += 1
            while end < input.count && input[end] != UInt8(ascii: "\"") && input[end] != UInt8(ascii: "\n") {
                end = skippingEscape(at: end)
            }
            output.append(contentsOf: Array(redactor.replacement.utf8))
            return end
        }
        while end < input.count && !isValueTerminator(input[end]) { end += 1 }
        output.append(contentsOf: Array(redactor.replacement.utf8))
        return end
    }

    /// `scheme://user:password@host`: the user information is replaced.
    private mutating func redactUserInfo(at index: Int) -> Int? {
        guard index + 3 <= input.count, input[index] == UInt8(ascii: ":"), input[index + 1] == UInt8(ascii: "/"),
            input[index + 2] == UInt8(ascii: "/")
        else { return nil }
        var end = index + 3
        while end < input.count && !isValueTerminator(input[end]) && input[end] != UInt8(ascii: "/")
            && input[end] != UInt8(ascii: "@") && input[end] != UInt8(ascii: "?")
        {
            end += 1
        }
        guard end < input.count, input[end] == UInt8(ascii: "@"), end > index + 3 else { return nil }
        output.append(contentsOf: input[index..<(index + 3)])
        output.append(contentsOf: Array(redactor.replacement.utf8))
        return end
    }

    /// The index after the byte at `index` inside a quoted value: past a backslash and the byte it escapes (an
    /// escaped quote, `\"`, is part of the value, not its end).
    private func skippingEscape(at index: Int) -> Int {
        input[index] == UInt8(ascii: "\\") && index + 1 < input.count ? index + 2 : index + 1
    }

    private func quoted(_ nameStart: Int, _ separator: Int) -> Bool {
        input[nameStart] == UInt8(ascii: "\"") && separator - nameStart >= 2
            && input[separator - 1] == UInt8(ascii: "\"")
    }

    private func matches(_ bytes: [UInt8], at index: Int) -> Bool {
        guard index + bytes.count <= input.count else { return false }
        for offset in 0..<bytes.count where lowercase(input[index + offset]) != bytes[offset] { return false }
        return true
    }

    private func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    private func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "\"")
    }

    private func isTokenByte(_ byte: UInt8) -> Bool {
        !(byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\t")
            || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "}"))
    }

    private func isValueTerminator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "#") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: ";")
            || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ">")
    }
}
