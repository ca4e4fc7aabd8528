import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import ResilienceCore
import ResilienceOpenAPI
import ResilienceTesting
import ResilienceTransport
import Testing

/// The responses `ResilienceClientTransport` hands a generated client, over an in-process `HTTPTransport`.
@Suite("ResilienceClientTransport responses")
struct ClientTransportTests {
    /// Answers every request with `status`, `headers` and `body`.
    struct FixedTransport: HTTPTransport {
        let status: Int
        var headers: ResilienceCore.HTTPHeaders = [:]
        let body: Data

        func send(
            _ request: ResilienceCore.HTTPRequest, context: ResilienceContext
        ) async throws -> ResilienceCore.HTTPResponse {
            ResilienceCore.HTTPResponse(status: status, headers: headers, body: body, url: request.url)
        }
    }

    static let baseURL = URL(string: "http://127.0.0.1:1")!

    @Test("An empty body of a 200 reaches the generated client as an empty body, not a missing one")
    func emptyBodyIsEmpty() async throws {
        let transport = ResilienceClientTransport(FixedTransport(status: 200, body: Data()))
        let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/report.txt")
        let (response, body) = try await transport.send(
            request, body: nil, baseURL: Self.baseURL, operationID: "getReport")
        #expect(response.status == .ok)
        // What a generated client does with an `application/octet-stream` or `text/plain` response.
        let content = try Converter(configuration: .init()).getResponseBodyAsBinary(
            HTTPBody.self, from: body, transforming: { $0 })
        #expect(try await String(collecting: content, upTo: 10).isEmpty)
    }

    @Test("A response that has no body (to a HEAD, a 204, a 304) reaches the client without one")
    func noBodyIsNil() async throws {
        for (method, status) in [(HTTPTypes.HTTPRequest.Method.head, 200), (.get, 204), (.get, 304)] {
            let transport = ResilienceClientTransport(FixedTransport(status: status, body: Data()))
            let request = HTTPTypes.HTTPRequest(method: method, scheme: nil, authority: nil, path: "/jobs")
            let (response, body) = try await transport.send(
                request, body: nil, baseURL: Self.baseURL, operationID: "jobs")
            #expect(response.status.code == status)
            #expect(body == nil)
        }
    }

    /// Expects `error` to be the adapter's typed invalid response: not transient, the request sent, the message
    /// containing `detail`.
    func expectInvalidResponse(_ error: (any Error)?, _ detail: String) throws {
        let invalid = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(invalid.code == .invalidResponse)
        #expect(invalid.classification.category == .invalidResponse)
        #expect(invalid.classification.isTransient == false)
        #expect(invalid.classification.requestWasNotSent == false)
        #expect(invalid.url == URL(string: "http://127.0.0.1:1/jobs"))
        #expect(invalid.classification.message?.contains(detail) == true, "\(invalid)")
    }

    @Test(
        "A status that is no final HTTP status (outside 200...599) is a typed invalid response, not a crash or a success",
        arguments: [-1, 0, 99, 100, 101, 199, 600, 999, 1000, 20_000, Int.max, Int.min])
    func statusOutOfRange(status: Int) async throws {
        let transport = ResilienceClientTransport(FixedTransport(status: status, body: Data("x".utf8)))
        let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs")
        let error = await #expect(throws: (any Error).self) {
            _ = try await transport.send(request, body: nil, baseURL: Self.baseURL, operationID: "jobs")
        }
        try expectInvalidResponse(error, "status \(status)")
    }

    @Test("The final statuses at both ends of 200...599 reach the client as they are", arguments: [200, 599])
    func statusAtTheEdges(status: Int) async throws {
        let transport = ResilienceClientTransport(FixedTransport(status: status, body: Data()))
        let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs")
        let (response, _) = try await transport.send(request, body: nil, baseURL: Self.baseURL, operationID: "jobs")
        #expect(response.status.code == status)
    }

    /// `count` header fields named `X-Field`, plus one whose name is not a token (which the adapter drops).
    static func headers(_ count: Int) -> ResilienceCore.HTTPHeaders {
        var headers = ResilienceCore.HTTPHeaders((0..<count).map { .init(name: "X-Field", value: "\($0)") })
        headers.add(name: "not a token", value: "dropped")
        return headers
    }

    @Test("A response with more header fields than HTTPFields holds is a typed invalid response, not a crash")
    func tooManyHeaderFields() async throws {
        let limit = Int(UInt16.max) - 1
        let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs")
        let most = ResilienceClientTransport(FixedTransport(status: 200, headers: Self.headers(limit), body: Data()))
        let (response, _) = try await most.send(request, body: nil, baseURL: Self.baseURL, operationID: "jobs")
        #expect(response.headerFields.count == limit)
        let over = ResilienceClientTransport(
            FixedTransport(status: 200, headers: Self.headers(limit + 1), body: Data()))
        let error = await #expect(throws: (any Error).self) {
            _ = try await over.send(request, body: nil, baseURL: Self.baseURL, operationID: "jobs")
        }
        try expectInvalidResponse(error, "more than \(limit) header fields")
    }
}
