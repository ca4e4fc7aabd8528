import Foundation
import ResilienceCore
import ResilienceTelemetry
import Tracing

/// An ``HTTPTransport`` decorator that opens one client span per attempt and propagates the trace to the
/// server: wrap any transport (URLSession, AsyncHTTPClient, scripted) with it.
///
/// For each request it sends:
/// - a span of kind `.client` named after the method (`GET`), a child of `InstrumentationContext.current`
///   (the operation's span when a ``TracingStrategy`` runs outside it), with OpenTelemetry's HTTP client
///   attributes: `http.request.method`, `url.full` (redacted), `server.address`, `server.port`,
///   `http.response.status_code`, and `http.request.resend_count` (the context's attempt − 1) from the second
///   attempt on. A method outside ``knownMethods`` (methods are an open set: a proxy forwards whatever its
///   clients send) names the span `HTTP`, with `http.request.method` `_OTHER` and the method in
///   `http.request.method_original`, as OpenTelemetry's conventions say, so span names stay a bounded set;
/// - the span's context injected into the request's headers through the instrument (W3C `traceparent` and
///   `tracestate` with an OpenTelemetry tracer), replacing any the request already had, so each attempt carries
///   its own span's id; a `baggage` header the caller set is kept (see ``propagationHeaders``);
/// - a response of 400 or more sets `error.type` to the status code and the span's status to `error`; a thrown
///   error is recorded with `error.type` = its stable code (`NET_002`), as a stand-in carrying its description
///   through ``redactor`` (never the error itself); cancellation is not an error, except when it comes at or
///   after `context.deadline` (an enforced timeout cutting the exchange off): then the span failed with a
///   timeout, `error.type` `NET_002`, like a transport that gives up at the deadline itself.
///
/// Put it innermost, right around the transport that sends, so it sees every attempt the pipeline makes:
///
/// ```swift
/// let transport = TracingTransport(wrapping: URLSessionTransport())
/// let pipeline = Pipeline { TracingStrategy(); RetryStrategy(policy: .standard) }
/// let response = try await pipeline.execute(context) { try await transport.send(request, context: $0) }
/// ```
///
/// It needs no tracer at the wrapped transport's creation: the tracer is read when each request is sent.
public struct TracingTransport: HTTPTransport {
    /// The transport that sends.
    public let base: any HTTPTransport
    /// The tracer; `nil` means `InstrumentationSystem.tracer` for spans and `InstrumentationSystem.instrument`
    /// for propagation, read at each request.
    public var tracer: (any Tracer)?
    /// The header names removed from a request before the span's context is injected, so it never carries a
    /// context other than its own span's (a stale `traceparent` the caller copied in); by default W3C Trace
    /// Context's, which belong to the span. A header the instrument writes replaces the caller's either way.
    public var propagationHeaders: Set<String>
    /// Removes secrets from `url.full` and from a recorded error's description.
    public var redactor: Redactor

    /// The methods that name a span and its `http.request.method` themselves: RFC 9110's and `PATCH`, the ones
    /// OpenTelemetry's HTTP conventions know. Any other is `HTTP` / `_OTHER`.
    public static let knownMethods: Set<String> = [
        "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE",
    ]

    /// W3C Trace Context's headers (`traceparent`, `tracestate`) and W3C Baggage's (`baggage`).
    public static let w3cHeaders: Set<String> = ["traceparent", "tracestate", "baggage"]

    /// W3C Trace Context's headers (`traceparent`, `tracestate`): the span's own, removed by default. A caller's
    /// `baggage` stays, since a tracer that propagates only W3C Trace Context would not
    /// write it back.
    public static let traceContextHeaders: Set<String> = ["traceparent", "tracestate"]

    /// Creates the decorator.
    ///
    /// - Parameters:
    ///   - base: The transport that sends.
    ///   - tracer: The tracer that starts spans and injects their context; by default
    ///     `InstrumentationSystem.tracer` and `InstrumentationSystem.instrument` at the time of each request.
    ///   - propagationHeaders: The header names removed before injecting (default: ``traceContextHeaders``).
    ///   - redactor: Removes secrets from `url.full` and from a recorded error's description.
    public init(
        wrapping base: any HTTPTransport, tracer: (any Tracer)? = nil,
        propagationHeaders: Set<String> = traceContextHeaders, redactor: Redactor = .standard
    ) {
        self.base = base
        self.tracer = tracer
        self.propagationHeaders = propagationHeaders
        self.redactor = redactor
    }

    /// Sends `request` through ``base`` inside a client span, with the span's context in its headers.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let spanTracer = tracer ?? InstrumentationSystem.tracer
        let known = Self.knownMethods.contains(request.method.rawValue)
        let span = spanTracer.startSpan(
            known ? request.method.rawValue : "HTTP", context: InstrumentationContext.current ?? .topLevel,
            ofKind: .client,
            at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        defer { span.end() }
        describe(request, knownMethod: known, attempt: context.attempt, on: span)

        var outgoing = request
        for name in propagationHeaders { outgoing.headers.remove(name) }
        if let tracer {
            tracer.inject(span.context, into: &outgoing.headers, using: HeadersInjector())
        } else {
            InstrumentationSystem.instrument.inject(span.context, into: &outgoing.headers, using: HeadersInjector())
        }

        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) {
                try await base.send(outgoing, context: context)
            }
            span.attributes.set(SemanticAttribute.Name.statusCode, value: .int64(Int64(response.status)))
            if response.status >= 400 {
                span.attributes.set(SemanticAttribute.Name.errorType, value: .string(String(response.status)))
                span.setStatus(SpanStatus(code: .error))
            }
            return response
        } catch {
            span.recordFailure(error, context: context, redactor: redactor, includingCategory: false)
            throw error
        }
    }

    private func describe(_ request: HTTPRequest, knownMethod: Bool, attempt: Int, on span: any Span) {
        guard span.isRecording else { return }
        if knownMethod {
            span.attributes.set(SemanticAttribute.Name.requestMethod, value: .string(request.method.rawValue))
        } else {
            span.attributes.set(SemanticAttribute.Name.requestMethod, value: .string("_OTHER"))
            span.attributes.set(
                "http.request.method_original", value: .string(redactor.redact(request.method.rawValue)))
        }
        span.attributes.set(SemanticAttribute.Name.url, value: .string(redactor.redact(request.url.absoluteString)))
        if let host = request.url.host {
            span.attributes.set(SemanticAttribute.Name.serverAddress, value: .string(host))
        }
        if let port = request.url.port ?? Self.defaultPort(scheme: request.url.scheme) {
            span.attributes.set(SemanticAttribute.Name.serverPort, value: .int64(Int64(port)))
        }
        if attempt > 1 {
            span.attributes.set(SemanticAttribute.Name.resendCount, value: .int64(Int64(attempt - 1)))
        }
    }

    private static func defaultPort(scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "https": 443
        case "http": 80
        default: nil
        }
    }
}

/// Writes an instrument's propagation values into ``HTTPHeaders``, replacing any field of the same name.
public struct HeadersInjector: Injector {
    /// Creates the injector.
    public init() {}

    /// Sets `key` to `value` in `headers`.
    public func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.remove(key)
        headers.add(name: key, value: value)
    }
}

/// Reads an instrument's propagation values from ``HTTPHeaders`` (the server side of ``HeadersInjector``).
public struct HeadersExtractor: Extractor {
    /// Creates the extractor.
    public init() {}

    /// The value of the header named `key`, if any.
    public func extract(key: String, from headers: HTTPHeaders) -> String? { headers[key] }
}
