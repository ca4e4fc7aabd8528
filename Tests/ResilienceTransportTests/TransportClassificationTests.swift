import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Transport classification")
struct TransportClassificationTests {
    let classifier = HTTPStatusClassifier(wallClock: { Date(timeIntervalSince1970: 1_445_412_480) })

    func classify(status: Int, headers: HTTPHeaders = [:], body: String = "") -> FailureClassification {
        let error = HTTPStatusError(response: HTTPResponse(status: status, headers: headers, body: Data(body.utf8)))
        return classifier.classify(error)!
    }

    @Test("Statuses follow seed 000 §2.2 and seed 002")
    func statusTable() {
        let expected: [(Int, FailureCategory, Bool)] = [
            (400, .clientError, false), (401, .authentication, false), (403, .authentication, false),
            (404, .notFound, false), (408, .timeout, true), (409, .conflict, false), (422, .clientError, false),
            (429, .rateLimited, true), (500, .serverError, true), (501, .clientError, false), (502, .serverError, true),
            (503, .serverError, true), (504, .timeout, true), (599, .serverError, true), (302, .invalidResponse, false),
        ]
        for (status, category, transient) in expected {
            let classification = classify(status: status)
            #expect(classification.category == category, "\(status)")
            #expect(classification.isTransient == transient, "\(status)")
            #expect(classification.httpStatus == status)
        }
        #expect(classify(status: 401).code == .unauthorized)
        #expect(classify(status: 403).code == .forbidden)
        #expect(classify(status: 429).code == .rateLimited)
    }

    @Test("A source can override a status (404 as something else) and still get the hint")
    func overrides() {
        let custom = HTTPStatusClassifier(overrides: [
            404: FailureClassification(category: "empty-result", code: "JOBS_404", isTransient: false)
        ])
        let classification = custom.classify(
            HTTPStatusError(response: HTTPResponse(status: 404, headers: ["Retry-After": "3"])))!
        #expect(classification.category == FailureCategory("empty-result"))
        #expect(classification.code == FailureCode("JOBS_404"))
        #expect(classification.retryAfter == .seconds(3))
        #expect(custom.classify(URLError(.timedOut)) == nil)
    }

    @Test("429 and 503 carry the retry hint")
    func hints() {
        #expect(classify(status: 429, headers: ["Retry-After": "7"]).retryAfter == .seconds(7))
        #expect(
            classify(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"]).retryAfter == .seconds(10))
        #expect(classify(status: 429, headers: ["Retry-After": "-7"]).retryAfter == nil)
    }

    @Test("Error bodies: detail+code, message, error, nested error, problem+json, X-Error-Code")
    func errorBodies() {
        #expect(
            classify(status: 404, body: #"{"detail":"Item doesn't exist","code":"ITEM_NOT_FOUND"}"#).message
                == "[ITEM_NOT_FOUND] Item doesn't exist")
        #expect(classify(status: 400, body: #"{"message":"bad page"}"#).message == "bad page")
        #expect(classify(status: 400, body: #"{"error":"invalid_grant"}"#).message == "invalid_grant")
        #expect(classify(status: 400, body: #"{"error":{"message":"nope","code":"E1"}}"#).message == "[E1] nope")
        #expect(
            classify(
                status: 422, headers: ["Content-Type": "application/problem+json"],
                body:
                    #"{"type":"https://example.com/probs/out-of-credit","title":"You do not have enough credit.","status":422}"#
            ).message == "[https://example.com/probs/out-of-credit] You do not have enough credit.")
        #expect(
            classify(status: 503, headers: ["X-Error-Code": "SERVICE_UNAVAILABLE"]).message == "[SERVICE_UNAVAILABLE]")
    }

    @Test("Hostile error bodies never crash: wrong member types are ignored")
    func hostileBodies() {
        #expect(classify(status: 500, body: #"{"detail":42,"code":["x"],"message":{"a":1}}"#).message == "HTTP 500")
        #expect(classify(status: 500, body: "<html>oops</html>").message == "HTTP 500")
        #expect(classify(status: 500, body: String(repeating: "[", count: 100_000)).message == "HTTP 500")
        let long = classify(status: 500, body: #"{"message":"\#(String(repeating: "a", count: 5_000))\u0007"}"#)
        #expect((long.message?.count ?? 0) <= ServerErrorDetails.maximumMessageLength)
        #expect(classify(status: 500, body: #"{"message":null,"error":true}"#).message == "HTTP 500")
    }

    @Test("URLError table, including what Linux reports")
    func urlErrors() {
        let table = URLErrorClassifier()
        func check(_ code: URLError.Code, _ category: FailureCategory, _ failureCode: FailureCode) {
            let classification = table.classify(URLError(code))
            #expect(classification?.category == category, "\(code)")
            #expect(classification?.code == failureCode, "\(code)")
        }
        check(.timedOut, .timeout, .timedOut)
        check(.cannotFindHost, .networkUnreachable, .hostNotFound)
        check(.cannotConnectToHost, .transient, .connectionRefused)
        check(.networkConnectionLost, .transient, .connectionReset)
        check(.notConnectedToInternet, .networkUnreachable, .noConnection)
        check(.secureConnectionFailed, .invalidResponse, .certificateInvalid)
        check(.serverCertificateUntrusted, .invalidResponse, .certificateInvalid)
        check(.appTransportSecurityRequiresSecureConnection, .insecureTransport, .insecureTransportBlocked)
        check(.httpTooManyRedirects, .invalidResponse, .tooManyRedirects)
        check(.badURL, .clientError, .invalidFormat)
        #expect(table.classify(URLError(.cannotConnectToHost))?.requestWasNotSent == true)
        #expect(table.classify(URLError(.networkConnectionLost))?.requestWasNotSent == false)
        // Linux: curl failures without a code of their own arrive as -1 or reuse a code; the text decides.
        func linux(_ code: Int, _ text: String) -> FailureClassification {
            URLErrorClassifier.classification(code: code, message: text)
        }
        #expect(linux(-1, "transfer closed with 991 bytes remaining to read").code == .truncatedResponse)
        #expect(linux(-1, "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection").code == .certificateInvalid)
        #expect(linux(-1, "something new").category == .unknown)
        // A response header over libcurl's limit (100 KB): "Out of memory" before libcurl 8.6, a value "grew larger
        // than allowed" since; the server's invalid response, as AsyncHTTPClient's header overflow is.
        for text in ["Out of memory", "A value or data field grew larger than allowed"] {
            #expect(linux(-1, text).category == .invalidResponse, "\(text)")
            #expect(linux(-1, text).code == .invalidResponse, "\(text)")
            #expect(!linux(-1, text).isTransient, "\(text)")
        }
        // HTTP/2 (libcurl's framing-layer errors, a GOAWAY mid-request among them): transient.
        #expect(linux(-1, "Error in the HTTP2 framing layer").code == .connectionReset)
        #expect(linux(-1, "Error in the HTTP2 framing layer").isTransient)
        #expect(linux(-1, "Stream error in the HTTP/2 framing layer").code == .connectionReset)
        #expect(linux(-1, "HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR (err 2)").isTransient)
        #expect(linux(-1, "HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR (err 2)").requestWasNotSent == false)
        #expect(linux(-1, "HTTP/2 stream 3 was refused").requestWasNotSent)
        #expect(linux(-1011, "Empty reply from server").code == .emptyReply)
        #expect(linux(-1011, "Empty reply from server").isTransient)
        #expect(linux(-1002, "Received HTTP/0.9 when not allowed").category == .invalidResponse)
        #expect(linux(-1002, "unsupported URL").category == .clientError)
        // -1004 is what FoundationNetworking reports for any failure once libcurl's connect errno is ECONNREFUSED,
        // which it stays after a refused address was followed by one that connected (localhost's ::1, then
        // 127.0.0.1): only a message that names a failed connection proves the request was not sent.
        for text in [
            "Failed to connect to 127.0.0.1 port 9 after 0 ms: Connection refused", "Could not connect to the server.",
            "Couldn't connect to server", "",
        ] {
            #expect(linux(-1004, text).code == .connectionRefused, "\(text)")
            #expect(linux(-1004, text).requestWasNotSent, "\(text)")
        }
        let afterConnecting: [(String, FailureCode)] = [
            ("Empty reply from server", .emptyReply), ("Server returned nothing (no headers, no data)", .emptyReply),
            ("Operation timed out after 120001 milliseconds with 0 bytes received", .timedOut),
            ("transfer closed with outstanding read data remaining", .truncatedResponse),
            ("HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR (err 2)", .connectionReset),
            ("Received HTTP/0.9 when not allowed", .invalidResponse),
        ]
        for (text, code) in afterConnecting {
            #expect(linux(-1004, text).code == code, "\(text)")
            #expect(!linux(-1004, text).requestWasNotSent, "\(text)")
        }
        #expect(!linux(-1004, "OpenSSL SSL_read: unexpected eof while reading, errno 0").requestWasNotSent)
        #expect(linux(-1004, "Empty reply from server").isTransient)
        #expect(linux(-1004, "Operation timed out after 120001 milliseconds with 0 bytes received").isTransient)
        #expect(table.classify(CocoaError(.fileNoSuchFile)) == nil)
        #expect(CompositeErrorClassifier([table]).classification(of: URLError(.cancelled)).category == .cancelled)
    }

    @Test("An attempt whose deadline passed before it began says so, and sends nothing")
    func deadlinePassedBeforeSending() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let context = ResilienceContext(key: "late", deadline: clock.now().advanced(by: .seconds(1)), clock: clock)
        manual.advance(by: .seconds(2))
        let sent = LockedBox(false)
        let request = HTTPRequest(url: URL(string: "https://example.com/late")!)
        let error = await #expect(throws: TransportError.self) {
            try await TransportExchange.run(request, context: context, defaultTimeout: .seconds(30)) { _ in
                sent.mutate { $0 = true }
                return HTTPResponse(status: 200)
            }
        }
        #expect(error?.classification.category == .timeout)
        #expect(error?.classification.message == "the attempt deadline had passed before the request was sent")
        #expect(!sent.value)
        // Nothing reached the server: a retry may send even a bare POST again.
        #expect(error?.classification.requestWasNotSent == true)
        let late = TransportError.timedOut(after: .seconds(2), url: nil)
        #expect(late.classification.message == "no complete response within the attempt deadline (2.0 seconds)")
        #expect(!late.classification.requestWasNotSent)
        #expect(!TransportError.timedOut(after: nil, url: nil).classification.requestWasNotSent)
        let idle = TransportError.idleTimedOut(after: .seconds(60), url: nil)
        #expect(idle.classification.category == .timeout)
        #expect(idle.code == .timedOut)
        #expect(idle.classification.isTransient)
        #expect(idle.classification.message == "no byte of the streamed body within 60.0 seconds")
    }

    @Test("Header fields: every token name and any value without control characters but tab pass; others are refused")
    func headerFields() async throws {
        let url = URL(string: "https://example.com/h")!
        var valid = HTTPHeaders()
        valid.add(name: "!#$%&'*+-.^_`|~09azAZ", value: "tab\there, UTF-8 café, quotes \"x\" and ;=,")
        valid.add(name: "X-Empty", value: "")
        try TransportExchange.validateHeaderFields(of: HTTPRequest(url: url, headers: valid))
        let refused = [
            ("X-Note", "secret\r\nX-Injected: yes"), ("X-Note", "secret\u{0}"), ("X-Note", "secret\u{7F}"),
            ("X-Note", "secret\u{1B}"), ("X Note", "secret"), ("X-Note:", "secret"), ("", "secret"),
            ("X-Nöte", "secret"), ("X-Note\r\nX-Injected", "secret"),
        ]
        for (name, value) in refused {
            var headers = valid
            headers.add(name: name, value: value)
            let sent = LockedBox(false)
            let error = await #expect(throws: TransportError.self, "\(name.debugDescription)") {
                try await TransportExchange.run(
                    HTTPRequest(url: url, headers: headers), context: ResilienceContext(key: "h"),
                    defaultTimeout: .seconds(30)
                ) { _ in
                    sent.mutate { $0 = true }
                    return HTTPResponse(status: 200)
                }
            }
            #expect(error?.classification.category == .clientError)
            #expect(error?.classification.code == .invalidFormat)
            #expect(error?.classification.isTransient == false)
            #expect(error?.classification.requestWasNotSent == true)
            #expect(error?.classification.message?.contains("secret") == false, "the value leaked into the message")
            #expect(!sent.value)
        }
    }
}
