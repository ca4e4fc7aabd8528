import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A swift-openapi-runtime `ClientTransport` over any ResilienceKit `HTTPTransport` (`URLSessionTransport`,
/// `AsyncHTTPClientTransport`, or a decorated one), so a generated client gets that transport's byte cap,
/// deadline enforcement, redirect rules and classified errors.
///
/// Under a ``ResilienceMiddleware`` each attempt's context (its deadline, clock and telemetry) reaches the
/// transport; without one, a context keyed by the operation ID is used.
///
/// ```swift
/// let client = Client(
///     serverURL: url, transport: ResilienceClientTransport(AsyncHTTPClientTransport()),
///     middlewares: [ResilienceMiddleware { registry.pipeline(for: $0) }])
/// ```
public struct ResilienceClientTransport: ClientTransport {
    /// The transport requests go through.
    public var transport: any HTTPTransport
    /// The largest request body it buffers (default 16 MiB); `HTTPTransport` sends bodies as `Data`.
    public var maximumRequestBody: Int
    /// The classifier for the context it builds when no middleware provides one.
    public var classifier: any ErrorClassifier

    /// Creates the adapter.
    /// - Parameters:
    ///   - transport: The ResilienceKit transport to send with.
    ///   - maximumRequestBody: The largest request body it buffers.
    ///   - classifier: The classifier of the context it builds when no ``ResilienceMiddleware`` runs.
    public init(
        _ transport: any HTTPTransport, maximumRequestBody: Int = 16 * 1024 * 1024,
        classifier: any ErrorClassifier = CompositeErrorClassifier.standard
    ) {
        self.transport = transport
        self.maximumRequestBody = maximumRequestBody
        self.classifier = classifier
    }

    /// Sends one request through the transport.
    public func send(
        _ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let path = request.path ?? "/"
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + (path.hasPrefix("/") ? path : "/" + path)) else {
            throw TransportError(
                FailureClassification(
                    category: .clientError, code: .invalidFormat, isTransient: false,
                    message: "invalid URL \(base + path)", requestWasNotSent: true))
        }
        var headers = ResilienceCore.HTTPHeaders()
        for field in request.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        let data: Data? =
            if let body { Data(try await ArraySlice<UInt8>(collecting: body, upTo: maximumRequestBody)) } else { nil }
        let context =
            AttemptContext.current
            ?? ResilienceContext(key: operationID, operation: operationID, classifier: classifier)
        let response = try await transport.send(
            ResilienceCore.HTTPRequest(
                method: ResilienceCore.HTTPMethod(rawValue: request.method.rawValue), url: url, headers: headers,
                body: data),
            context: context)
        var fields = HTTPFields()
        for field in response.headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        let head = HTTPTypes.HTTPResponse(status: .init(code: response.status), headerFields: fields)
        return (head, response.body.isEmpty ? nil : HTTPBody(response.body))
    }
}
