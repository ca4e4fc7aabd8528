import ResilienceCore

/// One attribute of an event, named after OpenTelemetry's semantic conventions where one exists
/// (`error.type`, `http.response.status_code`, `http.request.resend_count`, `server.address`) and under the
/// `resilience.` prefix otherwise.
///
/// Log, metric and trace bridges (swift-log metadata, span attributes) translate these one to one, so every
/// backend sees the same names.
public struct SemanticAttribute: Hashable, Sendable {
    /// A typed attribute value.
    public enum Value: Hashable, Sendable, CustomStringConvertible {
        /// Text.
        case string(String)
        /// An integer.
        case int(Int)
        /// A floating-point number (durations, in seconds).
        case double(Double)
        /// A flag.
        case bool(Bool)

        /// The value as text.
        public var description: String {
            switch self {
            case .string(let text): text
            case .int(let number): String(number)
            case .double(let number): String(number)
            case .bool(let flag): String(flag)
            }
        }
    }

    /// The attribute's name.
    public var key: String
    /// The attribute's value.
    public var value: Value

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - key: The attribute's name.
    ///   - value: Its value.
    public init(_ key: String, _ value: Value) {
        self.key = key
        self.value = value
    }
}

extension SemanticAttribute {
    /// The attribute names an event is described with.
    public enum Name {
        /// The event's kind (`retry-scheduled`).
        public static let event = "resilience.event"
        /// The key (source id or host) whose policies applied.
        public static let key = "resilience.key"
        /// The operation's name.
        public static let operation = "resilience.operation"
        /// The 1-based attempt number.
        public static let attempt = "resilience.attempt"
        /// How many times the request was sent again (attempt − 1, set from the second attempt on).
        public static let resendCount = "http.request.resend_count"
        /// The event's duration (latency, delay, wait or limit, by kind), in seconds.
        public static let duration = "resilience.duration"
        /// The failure's stable code (`NET_002`).
        public static let errorType = "error.type"
        /// The failure's message, redacted.
        public static let errorMessage = "error.message"
        /// The failure's category (`timeout`).
        public static let category = "resilience.error.category"
        /// Whether the failure is transient.
        public static let transient = "resilience.error.transient"
        /// The HTTP status of the response that failed.
        public static let statusCode = "http.response.status_code"
        /// The server's retry hint, in seconds.
        public static let retryAfter = "resilience.retry_after"
        /// A breaker's state before a transition.
        public static let breakerFrom = "resilience.breaker.from"
        /// A breaker's state after a transition.
        public static let breakerState = "resilience.breaker.state"
        /// How long a breaker stays open, in seconds.
        public static let breakerOpenFor = "resilience.breaker.open_for"
        /// The event's free-form detail, redacted.
        public static let detail = "resilience.detail"
        /// A count (succeeded sources, pending mutations).
        public static let count = "resilience.count"
        /// A total (attempted sources).
        public static let total = "resilience.total"
        /// The host a URL in the event names.
        public static let serverAddress = "server.address"
        /// The port a URL in the event names, when it has one.
        public static let serverPort = "server.port"
        /// The full URL in the event, redacted.
        public static let url = "url.full"
        /// An HTTP request's method (`GET`), on a client span.
        public static let requestMethod = "http.request.method"
        /// How many repeats of a log record's event (same kind, key and failure code) were left out before it.
        public static let suppressed = "resilience.suppressed"
    }

    /// The attributes describing `event`, after `redactor` removed secrets from its free-form fields.
    ///
    /// Only the fields the event has are included. `server.address`, `server.port` and `url.full` appear when
    /// the event's detail is a URL (a blocked plaintext request).
    ///
    /// - Parameters:
    ///   - event: The event to describe.
    ///   - redactor: Removes secrets from the key, operation, detail and message.
    ///   - includingKind: Whether to include ``Name/event`` (a log line's message or a span event's name may
    ///     already say it).
    public static func describing(
        _ event: ResilienceEvent, redactor: Redactor = .standard, includingKind: Bool = true
    ) -> [SemanticAttribute] {
        let event = redactor.redact(event)
        var attributes: [SemanticAttribute] = []
        attributes.reserveCapacity(12)
        if includingKind { attributes.append(.init(Name.event, .string(event.kind.rawValue))) }
        attributes.append(.init(Name.key, .string(event.key)))
        if !event.operation.isEmpty { attributes.append(.init(Name.operation, .string(event.operation))) }
        if event.attempt > 0 { attributes.append(.init(Name.attempt, .int(event.attempt))) }
        if event.attempt > 1 { attributes.append(.init(Name.resendCount, .int(event.attempt - 1))) }
        if let duration = event.duration { attributes.append(.init(Name.duration, .double(seconds(duration)))) }
        if let failure = event.classification {
            attributes.append(.init(Name.errorType, .string(failure.code.rawValue)))
            attributes.append(.init(Name.category, .string(failure.category.rawValue)))
            attributes.append(.init(Name.transient, .bool(failure.isTransient)))
            if let status = failure.httpStatus { attributes.append(.init(Name.statusCode, .int(status))) }
            if let hint = failure.retryAfter { attributes.append(.init(Name.retryAfter, .double(seconds(hint)))) }
            if let message = failure.message { attributes.append(.init(Name.errorMessage, .string(message))) }
        }
        if let transition = event.transition {
            attributes.append(.init(Name.breakerFrom, .string(transition.from.rawValue)))
            attributes.append(.init(Name.breakerState, .string(transition.to.rawValue)))
            if let openFor = transition.openFor {
                attributes.append(.init(Name.breakerOpenFor, .double(seconds(openFor))))
            }
        }
        if let count = event.count { attributes.append(.init(Name.count, .int(count))) }
        if let total = event.total { attributes.append(.init(Name.total, .int(total))) }
        if let detail = event.detail {
            if let server = ServerAddress(url: detail) {
                attributes.append(.init(Name.url, .string(detail)))
                attributes.append(.init(Name.serverAddress, .string(server.host)))
                if let port = server.port { attributes.append(.init(Name.serverPort, .int(port))) }
            } else {
                attributes.append(.init(Name.detail, .string(detail)))
            }
        }
        return attributes
    }

    /// `duration` in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        let (whole, fraction) = duration.components
        return Double(whole) + Double(fraction) / 1e18
    }
}

/// The host and port of an absolute `scheme://[userinfo@]host[:port][/…]` URL, parsed without Foundation.
struct ServerAddress: Hashable {
    var host: String
    var port: Int?

    init?(url: String) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }) else {
            return nil
        }
        var authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var hostPart = authority
        var portText: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if rest.hasPrefix(":") { portText = rest.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { return nil }
        host = String(hostPart)
        port = portText.isEmpty ? nil : Int(portText)
    }
}
