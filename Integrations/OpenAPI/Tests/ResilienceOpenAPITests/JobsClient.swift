import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// A hand-written client shaped like swift-openapi-generator's output for a two-operation jobs API
/// (`listJobs`: GET /jobs, `createJob`: POST /jobs), so the middleware runs inside a real `UniversalClient`.
struct JobsClient {
    enum ListOutput: Sendable, Equatable {
        case ok(String)
        case undocumented(statusCode: Int, body: String)
    }

    enum CreateOutput: Sendable, Equatable {
        case created(String)
        case undocumented(statusCode: Int, body: String)
    }

    let client: UniversalClient

    init(serverURL: URL, transport: any ClientTransport, middlewares: [any ClientMiddleware]) {
        client = UniversalClient(serverURL: serverURL, transport: transport, middlewares: middlewares)
    }

    func listJobs() async throws -> ListOutput {
        try await client.send(
            input: (),
            forOperation: "listJobs",
            serializer: { _ in (HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs"), nil) },
            deserializer: { response, body in
                let text = try await Self.text(body)
                return response.status.code == 200
                    ? .ok(text) : .undocumented(statusCode: response.status.code, body: text)
            })
    }

    func createJob(
        _ json: String, idempotencyKey: String? = nil, body makeBody: (@Sendable (String) -> HTTPBody)? = nil
    )
        async throws -> CreateOutput
    {
        try await client.send(
            input: json,
            forOperation: "createJob",
            serializer: { json in
                var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/jobs")
                request.headerFields[.contentType] = "application/json"
                if let idempotencyKey { request.headerFields[HTTPField.Name("Idempotency-Key")!] = idempotencyKey }
                return (request, makeBody?(json) ?? HTTPBody(json))
            },
            deserializer: { response, body in
                let text = try await Self.text(body)
                return response.status.code == 201
                    ? .created(text) : .undocumented(statusCode: response.status.code, body: text)
            })
    }

    static func text(_ body: HTTPBody?) async throws -> String {
        guard let body else { return "" }
        return try await String(collecting: body, upTo: 1024 * 1024)
    }
}
