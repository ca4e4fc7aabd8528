import Foundation

/// What an error response says about itself: a human-readable message and a server error code.
///
/// Understands `{"detail", "code"}`, `{"message"}`, `{"error": "…"}` and `{"error": {"message", "code"}}`,
/// RFC 9457 `application/problem+json` (`detail`, then `title`; `type` as the code), and the `X-Error-Code`
/// header. Members of the wrong type are ignored; bodies that are not JSON give no message. Never throws.
public struct ServerErrorDetails: Sendable, Hashable {
    /// The server's message, trimmed to ``maximumMessageLength`` characters, without control characters,
    /// however large the body it came from (up to ``maximumParsedBody``).
    public var message: String?
    /// The server's own error code (`ITEM_NOT_FOUND`), if any.
    public var code: String?

    /// The longest message kept.
    public static let maximumMessageLength = 500
    /// The largest body parsed for a message (the transport's response cap bounds it in practice).
    public static let maximumParsedBody = 16 * 1024 * 1024

    /// Creates details.
    ///
    /// - Parameters:
    ///   - message: The server's message, trimmed to ``maximumMessageLength`` characters, without control characters,
    ///     however large the body it came from (up to ``maximumParsedBody``).
    ///   - code: The server's own error code (`ITEM_NOT_FOUND`), if any.
    public init(message: String? = nil, code: String? = nil) {
        self.message = message
        self.code = code
    }

    /// Extracts the details from an error response.
    public static func parse(body: Data, headers: HTTPHeaders) -> ServerErrorDetails {
        var details = ServerErrorDetails()
        if body.count <= maximumParsedBody, let first = body.first(where: { !$0.isASCIIWhitespace }),
            first == UInt8(ascii: "{"),
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        {
            details.message =
                string(object["detail"]) ?? string(object["message"]) ?? string(object["error"])
                ?? (object["error"] as? [String: Any]).flatMap { string($0["message"]) } ?? string(object["title"])
            details.code =
                string(object["code"]) ?? (object["error"] as? [String: Any]).flatMap { string($0["code"]) }
                ?? string(object["type"]).flatMap { $0 == "about:blank" ? nil : $0 }
        }
        if let header = headers["X-Error-Code"].map(clean), !header.isEmpty { details.code = details.code ?? header }
        return details
    }

    /// `[CODE] message`, `message`, `[CODE]` or nil.
    public var summary: String? {
        switch (code, message) {
        case (let code?, let message?): "[\(code)] \(message)"
        case (nil, let message?): message
        case (let code?, nil): "[\(code)]"
        case (nil, nil): nil
        }
    }

    private static func string(_ value: Any?) -> String? {
        guard let text = value as? String else { return nil }
        let cleaned = clean(text)
        return cleaned.isEmpty ? nil : cleaned
    }

    private static func clean(_ text: String) -> String {
        let visible = text.unicodeScalars.lazy.filter { !CharacterSet.controlCharacters.contains($0) }
        return String(String.UnicodeScalarView(visible.prefix(maximumMessageLength)))
            .trimmingCharacters(in: .whitespaces)
    }
}

extension UInt8 {
    fileprivate var isASCIIWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}
