import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A provider whose refresh is a real request to FaultServer's `/oauth/token`, which answers 401.
final class RejectedRefreshProvider: CredentialProvider {
    let tokenURL: URL
    let transport: URLSessionTransport

    init(tokenURL: URL, transport: URLSessionTransport) {
        self.tokenURL = tokenURL
        self.transport = transport
    }

    func currentCredential() async throws -> Credential? { .bearer("stale") }

    func refreshCredential(rejected: Credential?) async throws -> Credential {
        let response = try await transport.send(
            HTTPRequest(method: .post, url: tokenURL), context: realContext())
        guard response.status == 200 else { throw HTTPStatusError(response: response) }
        return .bearer(String(decoding: response.body, as: UTF8.self))
    }

    func isRefreshRequest(_ request: HTTPRequest) -> Bool { request.url.path == "/oauth/token" }
}

/// Hostile and real-world responses over real loopback sockets: classification from the whole response,
/// failed refreshes, large error bodies.
@Suite("Hostile responses over FaultServer", .serialized)
struct HostileResponseTests {
    /// Sends `request` through a ResilientTransport with no retries and returns what it threw.
    func rejection(_ fault: Fault, method: HTTPMethod = .get) async throws -> FailureClassification? {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/r", fault)
        let transport = ResilientTransport(wrapping: sharedTransport) { _ in PassthroughPipeline() }
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(method: method, url: server.url("/r")), context: realContext())
        }
        return classify(error)
    }

    @Test("A HEAD of a body larger than the cap is answered: its Content-Length announces no body to refuse")
    func headOfLargeBody() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/big", .respond(status: 200, body: Data(count: 200_000)))
        var configuration = URLSessionTransportConfiguration()
        configuration.maximumResponseSize = 100_000
        let transport = URLSessionTransport(configuration: configuration)
        let response = try await transport.send(
            HTTPRequest(method: .head, url: server.url("/big")), context: realContext())
        #expect(response.status == 200)
        #expect(response.headers["Content-Length"] == "200000")
        #expect(response.body.isEmpty)
    }

    @Test("GitHub's 403 with x-ratelimit-remaining: 0 is rate-limited with the reset hint, not AUTH_003")
    func gitHubRateLimit403() async throws {
        let reset = Int(Date().timeIntervalSince1970) + 120
        let fault = Fault.json(
            #"{"message":"API rate limit exceeded for 203.0.113.7.","documentation_url":"https://docs.github.com/rest"}"#,
            status: 403,
            headers: [
                "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0", "x-ratelimit-used": "60",
                "x-ratelimit-reset": String(reset), "x-ratelimit-resource": "core",
            ])
        let classification = try #require(try await rejection(fault))
        #expect(classification.category == .rateLimited)
        #expect(classification.code == .rateLimited)
        #expect(classification.isTransient)
        let hint = try #require(classification.retryAfter)
        #expect(hint > .seconds(100) && hint <= .seconds(121))
        #expect(classification.message?.contains("API rate limit exceeded") == true)
    }

    @Test("A 403 without rate-limit headers stays a permission failure (AUTH_003)")
    func plain403() async throws {
        let classification = try #require(
            try await rejection(.json(#"{"message":"Must have admin rights"}"#, status: 403)))
        #expect(classification.code == .forbidden)
        #expect(!classification.isTransient)
    }

    @Test("An override sees the whole response: status, headers and body")
    func wholeResponseOverride() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/r", .json(#"{"error":"maintenance"}"#, status: 400, headers: ["X-Reason": "maintenance"]))
        let rule: HTTPStatusClassifier.ResponseRule = { response in
            guard response.headers["X-Reason"] == "maintenance",
                String(decoding: response.body, as: UTF8.self).contains("maintenance")
            else { return nil }
            return FailureClassification(category: .serverError, code: .serverUnavailable)
        }
        let classifier = TransportErrorClassifier(statuses: HTTPStatusClassifier(responseRules: [rule]))
        let transport = ResilientTransport(wrapping: sharedTransport, classifier: classifier) { _ in
            PassthroughPipeline()
        }
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(url: server.url("/r")), context: realContext())
        }
        let classification = try #require(error.map { classifier.classify($0) } ?? nil)
        #expect(classification.category == .serverError)
        #expect(classification.httpStatus == 400)
        #expect(classification.isTransient)
    }

    @Test(
        "A 409 saying the Idempotency-Key's request is still in progress is transient; an existing entity is a conflict"
    )
    func inProgressConflict() async throws {
        let inProgress = Fault.respond(
            status: 409, headers: ["Content-Type": "application/problem+json"],
            body: Data(
                #"{"type":"https://example.com/idempotency-key-in-progress","title":"A request with this Idempotency-Key is outstanding"}"#
                    .utf8))
        let transient = try #require(try await rejection(inProgress, method: .post))
        #expect(transient.isTransient)
        #expect(transient.category == .transient)
        let exists = try #require(
            try await rejection(.json(#"{"detail":"job 42 already exists","code":"ALREADY_EXISTS"}"#, status: 409)))
        #expect(exists.category == .conflict)
        #expect(!exists.isTransient)
    }

    @Test("A problem+json body over 16 KB keeps its message, and the displayed text stays bounded")
    func largeProblemBody() async throws {
        let padding = String(repeating: "x", count: 40 * 1024)
        let detail = "The job posting violates policy " + String(repeating: "y", count: 5_000)
        let body = #"{"type":"about:blank","title":"Rejected","extra":"\#(padding)","detail":"\#(detail)"}"#
        let fault = Fault.respond(
            status: 422, headers: ["Content-Type": "application/problem+json"], body: Data(body.utf8))
        let classification = try #require(try await rejection(fault))
        let message = try #require(classification.message)
        #expect(message.hasPrefix("The job posting violates policy"))
        #expect(message.count <= ServerErrorDetails.maximumMessageLength)
    }

    @Test(
        "20 concurrent 401s whose refresh answers 401: one refresh per round, each request fails once with AUTH_001",
        .timeLimit(.minutes(3)))
    func failedRefreshIsSingleFlight() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        // The 401s arrive spread over 80 ms and the refresh fails at once, so most requests meet their 401
        // after the refresh has already failed: they must not start another one.
        server.script(
            "/me",
            .randomlyDelayed(
                between: .zero, and: .milliseconds(80), then: .requireHeader(oneOf: ["Bearer never"])))
        server.script("/oauth/token", .status(401, body: "invalid_grant"))
        let refreshTransport = URLSessionTransport()
        let provider = RejectedRefreshProvider(tokenURL: server.url("/oauth/token"), transport: refreshTransport)
        var configuration = AuthenticationConfiguration()
        configuration.maximumRefreshes = 1_000
        let transport = AuthenticatingTransport(
            wrapping: sharedTransport, provider: provider, configuration: configuration)
        let url = server.url("/me")
        let rounds = 25
        var refreshesPerRound: [Int] = []
        for _ in 0..<rounds {
            let before = server.requests(to: "/oauth/token").count
            let codes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let error = await #expect(throws: (any Error).self) {
                            try await transport.send(HTTPRequest(url: url), context: realContext(timeout: .seconds(30)))
                        }
                        return classify(error)?.code.rawValue ?? "no error"
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: "AUTH_001", count: 20))
            refreshesPerRound.append(server.requests(to: "/oauth/token").count - before)
        }
        #expect(refreshesPerRound == Array(repeating: 1, count: rounds))
        #expect(server.requests(to: "/me").count == 20 * rounds)
    }

    @Test(
        "An idle timeout beyond 10⁹ s or under 1 s is clamped: requests neither trap nor time out at once",
        arguments: [Duration.seconds(Int64.max), .seconds(1e12), .zero, .seconds(-5), .milliseconds(1)])
    func hostileIdleTimeout(idleTimeout: Duration) async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/x", .json(#"{"a":1}"#))
        var configuration = URLSessionTransportConfiguration()
        configuration.idleTimeout = idleTimeout
        let transport = URLSessionTransport(configuration: configuration)
        let response = try await transport.send(
            HTTPRequest(url: server.url("/x")), context: ResilienceContext(key: "k"))
        #expect(response.status == 200)
    }
}
