import Foundation
import ResilienceCore

/// Coalesces identical requests (single flight): while a request is in flight, an identical one waits for
/// its response instead of sending another, and every caller gets the response (or the error).
///
/// Two requests are identical when they have the same method, URL, values of ``varyingHeaders`` (the headers
/// that change the response, as `Vary` would name them) and the same fields for every other header, the
/// ``credentialHeaders`` among them: a credential can travel in any header (an `X-API-Key`, a
/// ``Credential/headerName`` of your choice), so one user never gets another's response. The key keeps
/// those fields only to compare them: its description shows a fingerprint, never the values. Put the
/// decorator outside any that adds a header unique to each request (a request id, a trace header), or
/// identical requests stop sharing. Only ``methods`` are coalesced (GET and HEAD by default), and only
/// requests that are idempotent (``HTTPRequest/idempotency``) and have no body. Requests sent with different
/// ``ResilienceContext/priority`` never share: the request is admitted, shed and retried at its sender's.
///
/// A caller that is cancelled stops waiting at once; the request is cancelled only when every caller has
/// gone. The request runs with the context of the caller that sent it first; every caller stops waiting at its
/// own context's deadline (``TransportError/timedOut(after:url:)``, after emitting `timedOut`), as its own
/// request would have. The sender hears of its deadline once: when the request (still running for callers
/// that joined it) also reports its timeout to the sender's telemetry, the later of the two reports is
/// dropped. A caller that got another's response, or its error, emits ``ResilienceEventKind/requestCoalesced`` (with
/// the error's classification); one that left first emits nothing.
///
/// Put it outside ``ResilientTransport``, so identical callers share the retries as well:
///
/// ```swift
/// let transport = CoalescingTransport(wrapping: ResilientTransport(wrapping: session, pipeline: pipeline))
/// ```
public struct CoalescingTransport: HTTPTransport {
    /// The wrapped transport.
    public let base: any HTTPTransport
    /// The methods whose requests are coalesced.
    public let methods: Set<HTTPMethod>
    /// The headers whose values change the response (compared case-insensitively by name).
    public let varyingHeaders: [String]
    /// The headers that carry credentials: part of the key, never shown (as is every header not in
    /// ``varyingHeaders``).
    public let credentialHeaders: [String]
    /// The requests in flight.
    public let flights: SingleFlight<RequestKey>

    /// Wraps `base`.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport.
    ///   - methods: The methods whose requests are coalesced. Default: `[.get, .head]`.
    ///   - varyingHeaders: The headers whose values change the response. Default: `Accept`, `Accept-Encoding`,
    ///     `Accept-Language` and `Range`.
    ///   - credentialHeaders: The headers that carry credentials: part of the key, never in its description
    ///     (as every header not in `varyingHeaders` is). Default: `Authorization`, `Proxy-Authorization` and
    ///     `Cookie`.
    ///   - flights: The requests in flight; share one between decorators to coalesce across them. Default: a
    ///     table of this decorator's own.
    public init(
        wrapping base: any HTTPTransport, methods: Set<HTTPMethod> = [.get, .head],
        varyingHeaders: [String] = ["Accept", "Accept-Encoding", "Accept-Language", "Range"],
        credentialHeaders: [String] = ["Authorization", "Proxy-Authorization", "Cookie"],
        flights: SingleFlight<RequestKey> = SingleFlight()
    ) {
        self.base = base
        self.methods = methods
        self.varyingHeaders = varyingHeaders
        self.credentialHeaders = credentialHeaders
        self.flights = flights
    }

    /// Sends `request`, or waits for the identical request already in flight, at most until the context's
    /// deadline.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        guard let key = key(for: request) else { return try await base.send(request, context: context) }
        let base = base
        let flights = flights
        guard let deadline = context.deadline else {
            let (result, shared) = await flights.outcome(key, priority: context.priority) {
                try await base.send(request, context: context)
            }
            if shared { context.emitCoalesced(result, detail: "coalescing-transport") }
            return try result.get()
        }
        // The request runs with the context of the caller that sent it, so nothing else holds a caller that
        // joined to its own deadline: each caller's wait is raced against it, and a caller stops waiting then
        // (the request goes on for the others). The sender's deadline is also the request's, which reports its
        // own timeout to the sender's telemetry: `report` lets one of the two report it, whichever comes first.
        let report = DeadlineReport(deadline: deadline)
        var sent = context
        if let telemetry = context.telemetry { sent.telemetry = ReportingOnceSink(base: telemetry, report: report) }
        // A deadline already passed on arrival gave the caller no time at all, never a negative time.
        let limit = max(.zero, context.clock.now().duration(to: deadline))
        do {
            return try await withDeadline(until: deadline, clock: context.clock) { [sent] in
                let (result, shared) = await flights.outcome(key, priority: context.priority) {
                    try await base.send(request, context: sent)
                }
                if shared { context.emitCoalesced(result, detail: "coalescing-transport") }
                return try result.get()
            }
        } catch let timeUp as DeadlineExceededError {
            if let error = timeUp.operationError, !(error is CancellationError) {
                // The request failed once this caller's deadline had passed: a timeout is this caller's too,
                // reported once (the request may have reported it to the sender already).
                if Self.isTimeout(error, context), report.claim() {
                    context.emit(.timedOut) { $0.duration = limit }
                }
                throw error
            }
            if report.claim() { context.emit(.timedOut) { $0.duration = limit } }
            throw TransportError.timedOut(after: limit, url: request.url)
        }
    }

    /// Whether `error` is a timeout: as the context's classifier says, or, for what it does not recognise (a
    /// ``TransportError``), as ``TransportErrorClassifier/standard`` says.
    private static func isTimeout(_ error: any Error, _ context: ResilienceContext) -> Bool {
        let classification = context.classify(error)
        guard classification.category == .unknown else { return classification.category == .timeout }
        return TransportErrorClassifier.standard.classify(error)?.category == .timeout
    }

    /// The key `request` is coalesced under, or `nil` when it is not coalesced (its method is not in
    /// ``methods``, it is not idempotent, or it has a body).
    ///
    /// - Parameter request: The request.
    /// - Returns: Its key, or `nil`.
    public func key(for request: HTTPRequest) -> RequestKey? {
        guard methods.contains(request.method), request.idempotency.isIdempotent, request.body == nil else {
            return nil
        }
        let shown = Set(varyingHeaders.map { $0.lowercased() }).subtracting(credentialHeaders.map { $0.lowercased() })
        // Every field not shown, by lower-cased name (repeated fields keep their order): whatever header a
        // credential travels in, two users' requests differ.
        let hidden = request.headers.fields.enumerated()
            .map {
                (
                    offset: $0.offset,
                    field: RequestKey.HiddenField(name: $0.element.name.lowercased(), value: $0.element.value)
                )
            }
            .filter { !shown.contains($0.field.name) }
            .sorted { ($0.field.name, $0.offset) < ($1.field.name, $1.offset) }
            .map(\.field)
        return RequestKey(
            method: request.method, url: request.url.absoluteString,
            varying: varyingHeaders.map { request.headers.combinedValue(for: $0) }, hidden: hidden)
    }

    /// What makes two requests identical for coalescing. Its description never shows the credentials: not the
    /// hidden header fields, nor those in the URL.
    public struct RequestKey: Hashable, Sendable, CustomStringConvertible {
        /// The method.
        public let method: HTTPMethod
        /// The absolute URL.
        public let url: String
        /// The values of the varying headers, in ``CoalescingTransport/varyingHeaders`` order.
        public let varying: [String?]
        /// Every other header field (credentials included), compared but never shown.
        private let hidden: [HiddenField]

        /// A header field kept in the key only to compare it.
        struct HiddenField: Hashable, Sendable {
            var name: String
            var value: String
        }

        init(method: HTTPMethod, url: String, varying: [String?], hidden: [HiddenField]) {
            self.method = method
            self.url = url
            self.varying = varying
            self.hidden = hidden
        }

        /// A short fingerprint of the header fields the key hides, credentials among them (FNV-1a, for
        /// telling keys apart in logs; the key compares the fields themselves).
        public var credentialFingerprint: String {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for field in hidden {
                for byte in field.name.utf8 + [0] + field.value.utf8 {
                    hash ^= UInt64(byte)
                    hash = hash &* 0x100_0000_01b3
                }
                hash ^= 0xff
                hash = hash &* 0x100_0000_01b3
            }
            return String(hash >> 32, radix: 16)
        }

        /// `GET https://… [credentials 1a2b3c4d]`, the URL redacted (``Redactor/standard``: user information and
        /// secret-looking query parameters, such as `access_token`, are replaced; the key compares them whole).
        public var description: String {
            "\(method) \(Redactor.standard.redact(url)) [credentials \(credentialFingerprint)]"
        }
    }
}

/// Whether the timeout at one caller's deadline has been reported: the decorator and the request it sent both
/// report it to that caller's telemetry, and only the first may.
private final class DeadlineReport: Sendable {
    let deadline: ResilienceInstant
    private let reported = LockedState(initialState: false)

    init(deadline: ResilienceInstant) {
        self.deadline = deadline
    }

    /// Claims the report; `false` when it was already made.
    func claim() -> Bool {
        reported.withLock { reported in
            defer { reported = true }
            return !reported
        }
    }
}

/// The sender's telemetry as the request it sent sees it: a `timedOut` event at or after the sender's deadline
/// passes only if the decorator has not reported that deadline already; every other event passes unchanged.
private struct ReportingOnceSink: TelemetrySink {
    let base: any TelemetrySink
    let report: DeadlineReport

    var isEnabled: Bool { base.isEnabled }

    func receive(_ event: ResilienceEvent) {
        if event.kind == .timedOut, event.time >= report.deadline, !report.claim() { return }
        base.receive(event)
    }
}
