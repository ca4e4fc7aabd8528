import Foundation
import ResilienceCore
import ResilienceTesting
import ResilienceTransport
import Testing

/// The http-tests cache suite (RFC 9111), vendored in `Tests/Fixtures/cache-tests` with its licence and
/// converted by `Scripts/cache-tests/convert.mjs` into `cases.json`. Each applicable test runs against a
/// ``CachingTransport`` over a loopback `FaultServer` that serves the test's configured responses, with the
/// harness's checks (`test-engine/client/test.mjs`): served from cache or not, validated with `ETag` or
/// `Last-Modified`, statuses, headers, bodies and the requests the server saw. The 3-second pauses advance a
/// virtual wall clock the cache and the server's `Date` fields share, so no test sleeps.
@Suite("RFC 9111 conformance (http-tests cache-tests)")
struct HTTPCacheConformanceTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/cache-tests")

    /// Required tests that apply and do not pass yet, with the reason (Docs/Caching.md lists them too).
    static let knownRequiredFailures: [String: String] = [:]

    /// Why a test cannot run faithfully over this harness, or `nil`: FaultServer frames every body with its
    /// real length, so a configured `Content-Length` never reaches the cache.
    static func harnessLimitation(_ test: CacheTest) -> String? {
        let framed = test.requests.contains { request in
            request.responseHeaders.contains { $0.name.lowercased() == "content-length" }
        }
        return framed ? "configures a Content-Length the loopback server replaces with the real one" : nil
    }

    @Test("Every applicable required test passes, and at least 80 % of the optimal ones")
    func cacheSuite() async throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("cases.json"))
        let document = try JSONDecoder().decode(CacheTestDocument.self, from: data)
        let server = try FaultServer()
        defer { server.stop() }
        var tallies: [String: [String: (passed: Int, applicable: Int)]] = [:]
        var requiredFailures: [String] = []
        var optimal = (passed: 0, applicable: 0)
        var report: [String] = []
        for suite in document.suites {
            var outcomes: [String: CacheTestOutcome] = [:]
            let runnable = suite.tests.filter { $0.notApplicable == nil && Self.harnessLimitation($0) == nil }
            for test in runnable {
                outcomes[test.id] = await CacheTestRun(test: test, suite: suite.id, server: server).run()
            }
            for test in runnable {
                guard let outcome = outcomes[test.id] else { continue }
                // A test counts by its own checks; a failed dependency only explains a failure (the suite's
                // "must not" tests hold whether or not the optional behaviour they guard exists).
                let dependencyFailed = test.dependsOn.contains { outcomes[$0].map { !$0.passed } ?? false }
                let passed = outcome.passed
                var tally = tallies[suite.id, default: [:]][test.kind, default: (0, 0)]
                tally.applicable += 1
                if passed { tally.passed += 1 }
                tallies[suite.id, default: [:]][test.kind] = tally
                if test.kind == "optimal" {
                    optimal.applicable += 1
                    if passed { optimal.passed += 1 }
                }
                if !passed {
                    let why = outcome.description + (dependencyFailed ? " (a test it depends on failed too)" : "")
                    report.append("  \(test.kind) \(suite.id)/\(test.id): \(why)")
                    if test.kind == "required", Self.knownRequiredFailures[test.id] == nil {
                        requiredFailures.append("\(suite.id)/\(test.id): \(why)")
                    }
                }
            }
        }
        print("RFC 9111 cache-tests, per suite (passed/applicable):")
        for suite in document.suites {
            let counts = tallies[suite.id, default: [:]]
            let columns = ["required", "optimal", "check"].map { kind in
                let tally = counts[kind, default: (0, 0)]
                return "\(kind) \(tally.passed)/\(tally.applicable)"
            }
            let skipped = suite.tests.filter { $0.notApplicable != nil }.count
            let limited = suite.tests.filter { $0.notApplicable == nil && Self.harnessLimitation($0) != nil }.count
            print(
                "  \(suite.id): \(columns.joined(separator: ", ")), not applicable \(skipped), harness-limited \(limited)"
            )
        }
        print("optimal overall: \(optimal.passed)/\(optimal.applicable)")
        print("Not passing:\n" + report.joined(separator: "\n"))
        #expect(requiredFailures.isEmpty, "\(requiredFailures)")
        #expect(optimal.passed * 10 >= optimal.applicable * 8, "optimal \(optimal.passed)/\(optimal.applicable)")
    }
}

// MARK: The converted suite

struct CacheTestDocument: Decodable {
    var suites: [CacheTestSuite]
}

struct CacheTestSuite: Decodable {
    var id: String
    var name: String
    var tests: [CacheTest]
}

struct CacheTest: Decodable {
    var id: String
    var name: String
    var kind: String
    var dependsOn: [String]
    var requests: [CacheTestRequest]
    var notApplicable: String?
}

struct CacheTestHeader: Decodable {
    var name: String
    var value: String?
    var dateOffset: Int?
    var rfc850: Bool?
    var checked: Bool?
    var sameAs: String?
    var greaterThan: Int?

    /// The value with a date offset made a date relative to `now`.
    func resolved(now: Date) -> String? {
        if let dateOffset {
            return HTTPDate.format(now.addingTimeInterval(Double(dateOffset)), rfc850: rfc850 ?? false)
        }
        return value
    }
}

struct CacheTestRequest: Decodable {
    var method: String
    var requestHeaders: [CacheTestHeader]
    var pauseAfter: Bool
    var disconnect: Bool
    var magicLocations: Bool
    var magicIfModifiedSince: Bool
    var responseHeaders: [CacheTestHeader]
    var checkBody: Bool
    var setup: Bool
    var setupChecks: [String]
    var requestBody: String?
    var queryArgument: String?
    var filename: String?
    var responseBody: String?
    var responsePause: Int?
    var expectedType: String?
    var expectedMethod: String?
    var responseStatus: Int?
    var skipStatusCheck: Bool?
    var expectedStatus: Int?
    var skipTextCheck: Bool?
    var expectedResponseText: String?
    var expectedRequestHeaders: [CacheTestHeader]?
    var expectedRequestHeadersMissing: [CacheTestHeader]?
    var expectedResponseHeaders: [CacheTestHeader]?
    var expectedResponseHeadersMissing: [CacheTestHeader]?

    func isSetup(_ check: String) -> Bool { setup || setupChecks.contains(check) }
}

// MARK: Running one test

enum CacheTestOutcome: CustomStringConvertible {
    case passed
    case failed(String)
    case setupFailed(String)

    var passed: Bool { if case .passed = self { true } else { false } }

    var description: String {
        switch self {
        case .passed: "passed"
        case .failed(let message): message
        case .setupFailed(let message): "setup: \(message)"
        }
    }
}

struct CacheTestFailure: Error {
    var message: String
    var isSetup: Bool
}

/// One test's requests against a fresh cache, in the order and with the checks of the suite's harness.
struct CacheTestRun {
    let test: CacheTest
    let suite: String
    let server: FaultServer
    static let noBodyStatuses: Set<Int> = [204, 304]

    func check(_ isSetup: Bool, _ condition: Bool, _ message: @autoclosure () -> String) throws(CacheTestFailure) {
        if !condition { throw CacheTestFailure(message: message(), isSetup: isSetup) }
    }

    func run() async -> CacheTestOutcome {
        do {
            try await runSteps()
            return .passed
        } catch let failure as CacheTestFailure {
            return failure.isSetup ? .setupFailed(failure.message) : .failed(failure.message)
        } catch {
            return .failed("\(error)")
        }
    }

    private func runSteps() async throws {
        let clock = TestWallClock()
        let cache = CachingTransport(
            wrapping: LoopbackHTTPTransport(port: server.port), store: InMemoryHTTPCacheStore(), wallClock: clock.read)
        let base = "/test/\(suite)/\(test.id)"
        let uuid = "\(suite)-\(test.id)"
        var previousSentHeaders: [CacheTestHeader] = []
        var previousServerNow: Date?
        for (index, step) in test.requests.enumerated() {
            let requestNumber = index + 1
            let path = base + (step.filename.map { "/\($0)" } ?? "")
            let target = path + (step.queryArgument.map { "?\($0)" } ?? "")
            let now = clock.date

            // The server's answer, as the harness's handle-test.mjs builds it.
            var sent: [CacheTestHeader] = []
            var headers: HTTPHeaders = [
                "Server-Request-Count": "\(requestNumber)", "Client-Request-Count": "\(requestNumber)",
                "Server-Now": "\(Int(now.timeIntervalSince1970 * 1_000))",
            ]
            for header in step.responseHeaders {
                var value = header.resolved(now: now) ?? ""
                if step.magicLocations, ["location", "content-location"].contains(header.name.lowercased()) {
                    value = value.isEmpty ? target : "\(target)/\(value)"
                }
                headers.add(name: header.name, value: value)
                var resolved = header
                resolved.value = value
                resolved.dateOffset = nil
                sent.append(resolved)
            }
            if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "text/plain") }
            func answer(_ status: Int) -> Fault {
                .respond(
                    status: status, headers: headers,
                    body: Self.noBodyStatuses.contains(status) ? Data() : Data((step.responseBody ?? uuid).utf8))
            }
            var fault = answer(step.responseStatus ?? 200)
            if let type = step.expectedType, type.hasSuffix("validated") {
                fault = answer(999)
                if let lastModified = previousSentHeaders.last(where: { $0.name.lowercased() == "last-modified" })?
                    .value
                {
                    fault = .requireHeader(
                        "If-Modified-Since", oneOf: [lastModified], then: answer(304), otherwise: fault)
                }
                if let entityTag = previousSentHeaders.last(where: { $0.name.lowercased() == "etag" })?.value {
                    fault = .requireHeader("If-None-Match", oneOf: [entityTag], then: answer(304), otherwise: fault)
                }
            }
            if step.disconnect { fault = .reset }
            if let pause = step.responsePause { fault = .delayed(by: .seconds(pause), then: fault) }
            server.script(path, [fault])

            // The client's request.
            var request = HTTPRequest(
                method: HTTPMethod(rawValue: step.method),
                url: URL(string: "http://127.0.0.1:\(server.port)\(target)")!,
                body: step.requestBody.map { Data($0.utf8) })
            for header in step.requestHeaders {
                var value = header.resolved(now: now) ?? ""
                if step.magicIfModifiedSince, header.name.lowercased() == "if-modified-since",
                    let dateOffset = header.dateOffset,
                    let previousServerNow
                {
                    value = HTTPDate.format(previousServerNow.addingTimeInterval(Double(dateOffset)))
                }
                request.headers.add(name: header.name, value: value)
            }
            let seenBefore = server.requests.filter { $0.path.hasPrefix(base) }.count
            let response: HTTPResponse
            do {
                response = try await cache.send(request, context: ResilienceContext(key: "cache-tests"))
            } catch {
                // A test that expects no particular status (a disconnect) accepts a failed request: a client
                // cache throws where a proxy would answer 502.
                guard step.skipStatusCheck == true, !step.checkBody else {
                    throw CacheTestFailure(message: "request \(requestNumber) failed: \(error)", isSetup: step.setup)
                }
                response = HTTPResponse(status: 0)
            }
            let seen = server.requests.filter { $0.path.hasPrefix(base) }.dropFirst(seenBefore)
            let serverRequest = seen.first
            previousServerNow = response.headers["Server-Now"].flatMap { Double($0) }.map {
                Date(timeIntervalSince1970: $0 / 1_000)
            }
            previousSentHeaders = sent
            try checkResponse(step, requestNumber, response, serverRequest: serverRequest, sent: sent)
            if step.pauseAfter { clock.advance(by: 3) }
        }
    }

    private func checkResponse(
        _ step: CacheTestRequest, _ number: Int, _ response: HTTPResponse, serverRequest: RecordedRequest?,
        sent: [CacheTestHeader]
    ) throws(CacheTestFailure) {
        let typeSetup = step.isSetup("expected_type")
        // As the harness does: the response names the request the server answered (a stored one names an
        // earlier request; a background revalidation does not make an answer "not cached").
        let answered = response.headers["Server-Request-Count"].flatMap { Int($0) }
        switch step.expectedType {
        case "cached":
            if !(response.status == 304 && answered == nil) {
                try check(typeSetup, (answered ?? .max) < number, "response \(number) does not come from cache")
            }
        case "not_cached":
            try check(typeSetup, answered == number, "response \(number) comes from cache")
        case "etag_validated", "lm_validated":
            let header = step.expectedType == "etag_validated" ? "If-None-Match" : "If-Modified-Since"
            try check(typeSetup, serverRequest != nil, "request \(number) wasn't sent to server")
            try check(
                typeSetup, serverRequest?.headers.contains(header) == true, "request \(number) doesn't have \(header)")
        default:
            break
        }
        if step.skipStatusCheck == true {
        } else if let expected = step.expectedStatus {
            try check(
                step.isSetup("expected_status"), response.status == expected,
                "response \(number) status is \(response.status), not \(expected)")
        } else if let configured = step.responseStatus {
            try check(
                true, response.status == configured,
                "response \(number) status is \(response.status), not \(configured)")
        } else if response.status == 999 {
            try check(typeSetup, false, "request \(number) should have been conditional, but it was not")
        } else {
            try check(true, response.status == 200, "response \(number) status is \(response.status), not 200")
        }
        let serverNow = response.headers["Server-Now"].flatMap { Double($0) }.map {
            Date(timeIntervalSince1970: $0 / 1_000)
        }
        for expected in step.expectedResponseHeaders ?? [] {
            let setup = step.isSetup("expected_response_headers")
            let value = response.headers.combinedValue(for: expected.name)
            try check(setup, value != nil, "response \(number) \(expected.name) header not present")
            if let other = expected.sameAs {
                let otherValue = response.headers.combinedValue(for: other)
                try check(
                    setup, value == otherValue,
                    "response \(number) \(expected.name) is \(value ?? "-"), not \(other) (\(otherValue ?? "-"))")
            } else if let bound = expected.greaterThan {
                try check(
                    setup, (value.flatMap { Int($0) } ?? .min) > bound,
                    "response \(number) \(expected.name) is \(value ?? "-"), not > \(bound)")
            } else if let wanted = expected.resolved(now: serverNow ?? Date(timeIntervalSince1970: 0)) {
                try check(
                    setup, value == wanted,
                    "response \(number) \(expected.name) is \"\(value ?? "-")\", not \"\(wanted)\"")
            }
        }
        for missing in step.expectedResponseHeadersMissing ?? [] {
            let setup = step.isSetup("expected_response_headers_missing")
            let value = response.headers.combinedValue(for: missing.name)
            if let unwanted = missing.value {
                try check(
                    setup, !(value?.contains(unwanted) ?? false),
                    "response \(number) \(missing.name) still has \(unwanted)")
            } else {
                try check(setup, value == nil, "response \(number) includes unexpected \(missing.name): \(value ?? "")")
            }
        }
        if step.checkBody {
            let body = String(decoding: response.body, as: UTF8.self)
            if let expected = step.expectedResponseText {
                try check(
                    step.isSetup("expected_response_text"), body == expected,
                    "response body is \"\(body)\", not \"\(expected)\"")
            } else if step.skipTextCheck == true {
            } else if let configured = step.responseBody {
                try check(true, body == configured, "response body is \"\(body)\", not \"\(configured)\"")
            } else if !Self.noBodyStatuses.contains(response.status), step.method != "HEAD" {
                try check(true, body == "\(suite)-\(test.id)", "response body is \"\(body)\", not the test's")
            }
        }
        guard let serverRequest else { return }
        for expected in step.expectedRequestHeaders ?? [] {
            let value = serverRequest.headers.combinedValue(for: expected.name)
            let setup = step.isSetup("expected_request_headers")
            if let wanted = expected.value {
                try check(
                    setup, value == wanted,
                    "request \(number) \(expected.name) is \"\(value ?? "-")\", not \"\(wanted)\"")
            } else {
                try check(setup, value != nil, "request \(number) \(expected.name) header not present")
            }
        }
        for missing in step.expectedRequestHeadersMissing ?? [] {
            let value = serverRequest.headers.combinedValue(for: missing.name)
            let setup = step.isSetup("expected_request_headers_missing")
            if let unwanted = missing.value {
                try check(setup, value != unwanted, "request \(number) \(missing.name) is \"\(unwanted)\"")
            } else {
                try check(setup, value == nil, "request \(number) \(missing.name) header present")
            }
        }
        var combined: [(String, String)] = []
        for header in sent where header.checked != false {
            if let index = combined.firstIndex(where: { $0.0.lowercased() == header.name.lowercased() }) {
                combined[index].1 += ", \(header.value ?? "")"
            } else {
                combined.append((header.name, header.value ?? ""))
            }
        }
        for (name, value) in combined {
            let received = response.headers.combinedValue(for: name)
            try check(true, received == value, "response \(number) \(name) is \"\(received ?? "-")\", not \"\(value)\"")
        }
        if let method = step.expectedMethod {
            try check(
                step.isSetup("expected_method"), serverRequest.method == method,
                "request \(number) had method \(serverRequest.method), not \(method)")
        }
    }
}

/// An ``HTTPTransport`` that speaks HTTP/1.1 to a loopback port with one connection per request and follows
/// no redirects, so the cache sees exactly what the test server sent.
struct LoopbackHTTPTransport: HTTPTransport {
    let port: UInt16

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if let query = components?.percentEncodedQuery { target += "?\(query)" }
        var text = "\(request.method.rawValue) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for field in request.headers { text += "\(field.name): \(field.value)\r\n" }
        if let body = request.body {
            text += "Content-Length: \(body.count)\r\n\r\n" + String(decoding: body, as: UTF8.self)
        } else {
            text += "\r\n"
        }
        let reply = await RawHTTPClient(port: port).exchange(text, timeout: 10)
        guard let status = reply.statusCode else { throw URLError(.networkConnectionLost) }
        var headers = HTTPHeaders()
        for line in reply.head.components(separatedBy: "\r\n").dropFirst() {
            let pieces = line.split(separator: ":", maxSplits: 1)
            guard pieces.count == 2 else { continue }
            headers.add(name: String(pieces[0]), value: pieces[1].trimmingCharacters(in: .whitespaces))
        }
        var body = Data(reply.body)
        if request.method == .head { body = Data() }
        if let length = headers["Content-Length"].flatMap({ Int($0) }), body.count > length {
            body = body.prefix(length)
        }
        return HTTPResponse(status: status, headers: headers, body: body, url: request.url)
    }
}
