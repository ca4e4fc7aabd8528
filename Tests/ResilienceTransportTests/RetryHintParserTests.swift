import Foundation
import ResilienceTransport
import Testing

@Suite("Retry-After and rate-limit hints")
struct RetryHintParserTests {
    let parser = RetryHintParser()
    let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test("The three HTTP-date forms parse to the same instant")
    func httpDates() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("Wed, 21 Oct 2015 07:28:00 GMT") == Date(timeIntervalSince1970: 1_445_412_480))
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT") == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT") == Date(timeIntervalSince1970: 951_782_400))
        #expect(HTTPDate.parse("Wed, 31 Dec 2025 23:59:59 GMT") == Date(timeIntervalSince1970: 1_767_225_599))
        for garbage in [
            "", "tomorrow", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            String(repeating: "Sun, ", count: 100),
            // Days the month does not have.
            "Mon, 31 Feb 2025 00:00:00 GMT", "Thu, 31 Apr 2025 00:00:00 GMT", "Wed, 29 Feb 2023 00:00:00 GMT",
            "Sat, 29 Feb 1900 00:00:00 GMT", "Thursday, 31-Jun-94 08:49:37 GMT", "Sat Feb 30 08:49:37 2024",
        ] {
            #expect(HTTPDate.parse(garbage) == nil, "\(garbage)")
        }
    }

    @Test("An RFC 850 two-digit year is the latest with those digits not more than 50 years after now")
    func rfc850TwoDigitYear() throws {
        func year(_ text: String, now: String) throws -> String? {
            let now = try #require(HTTPDate.parse(now))
            return HTTPDate.parse(text, now: now).map { String(HTTPDate.format($0).suffix(17).prefix(4)) }
        }
        let now2026 = "Mon, 30 Nov 2026 12:00:00 GMT"
        #expect(try year("Sunday, 06-Nov-94 08:49:37 GMT", now: now2026) == "1994")
        #expect(try year("Friday, 01-Jan-76 00:00:00 GMT", now: now2026) == "2076")
        #expect(try year("Friday, 30-Nov-76 11:59:59 GMT", now: now2026) == "2076")
        #expect(try year("Friday, 30-Nov-76 12:00:01 GMT", now: now2026) == "1976")
        #expect(try year("Friday, 01-Jan-77 00:00:00 GMT", now: now2026) == "1977")
        #expect(try year("Friday, 01-Jan-26 00:00:00 GMT", now: now2026) == "2026")
        #expect(try year("Friday, 01-Jan-81 00:00:00 GMT", now: "Mon, 01 Jan 2080 00:00:00 GMT") == "2081")
        #expect(try year("Friday, 01-Jan-00 00:00:00 GMT", now: "Tue, 01 Jan 2099 00:00:00 GMT") == "2100")
        // A clock that reads nonsense does not trap: the date is then simply not one a 4-digit year can write.
        for nonsense in [Double.infinity, -.infinity, .nan, 1e300, -1e300] {
            _ = HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Date(timeIntervalSince1970: nonsense))
        }

        // Every reader of a date takes the century from its own time: a cache's response time, a
        // retry hint's now (in 2080, `Expires` and `Retry-After` in `81` are a year away, not 99 years ago).
        let responseTime = try #require(HTTPDate.parse("Mon, 01 Jan 2080 00:00:00 GMT"))
        let response = HTTPResponse(
            status: 200,
            headers: ["Date": "Mon, 01 Jan 2080 00:00:00 GMT", "Expires": "Wednesday, 01-Jan-81 00:00:00 GMT"])
        #expect(HTTPCachePolicy().freshnessLifetime(of: response, responseTime: responseTime) == 366 * 86_400)
        #expect(
            parser.retryDelay(from: ["Retry-After": "Monday, 01-Jan-80 00:00:30 GMT"], now: responseTime)
                == .seconds(30))
    }

    @Test("delta-seconds: digits only; negative, fractional and garbage ignored; huge clamped")
    func deltaSeconds() {
        #expect(parser.retryAfter("120", responseDate: nil, now: now) == .seconds(120))
        #expect(parser.retryAfter("  0 ", responseDate: nil, now: now) == .zero)
        #expect(parser.retryAfter("-5", responseDate: nil, now: now) == nil)
        #expect(parser.retryAfter("1.5", responseDate: nil, now: now) == nil)
        #expect(parser.retryAfter("soon", responseDate: nil, now: now) == nil)
        #expect(parser.retryAfter("", responseDate: nil, now: now) == nil)
        #expect(parser.retryAfter("99999999999999999999999", responseDate: nil, now: now) == .seconds(3_600))
        #expect(parser.retryAfter("86400", responseDate: nil, now: now) == .seconds(3_600))
        #expect(
            RetryHintParser(maximumDelay: .seconds(10)).retryAfter("30", responseDate: nil, now: now) == .seconds(10))
    }

    @Test("Leading zeros do not make delta-seconds huge: 00000000000030 is 30 s, not the maximum delay")
    func leadingZeros() {
        #expect(parser.retryAfter("0030", responseDate: nil, now: now) == .seconds(30))
        #expect(parser.retryAfter("00000000000030", responseDate: nil, now: now) == .seconds(30))
        #expect(parser.retryAfter(String(repeating: "0", count: 40) + "7", responseDate: nil, now: now) == .seconds(7))
        #expect(parser.retryAfter(String(repeating: "0", count: 40), responseDate: nil, now: now) == .zero)
        #expect(parser.retryDelay(from: ["RateLimit-Reset": "00000000000020"], now: now) == .seconds(20))
        #expect(parser.retryDelay(from: ["X-RateLimit-Reset": "00000000000020"], now: now) == .seconds(20))
        let later = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(parser.retryDelay(from: ["X-RateLimit-Reset": "0001700000060"], now: later) == .seconds(60))
        // Thirteen significant digits are still huge.
        #expect(
            parser.retryAfter("0" + String(repeating: "9", count: 13), responseDate: nil, now: now) == .seconds(3_600))
    }

    @Test("An HTTP-date is measured against the response's Date header, not the skewed device clock")
    func dateRelativeToResponseDate() {
        let serverNow = HTTPDate.parse("Wed, 21 Oct 2015 07:28:00 GMT")
        let skewedDevice = Date(timeIntervalSince1970: 2_000_000_000)
        for form in ["Wed, 21 Oct 2015 07:28:30 GMT", "Wednesday, 21-Oct-15 07:28:30 GMT", "Wed Oct 21 07:28:30 2015"] {
            #expect(parser.retryAfter(form, responseDate: serverNow, now: skewedDevice) == .seconds(30), "\(form)")
        }
        #expect(parser.retryAfter("Sun, 06 Nov 1994 08:50:37 GMT", responseDate: nil, now: now) == .seconds(60))
        #expect(parser.retryAfter("Sun, 06 Nov 1994 08:40:00 GMT", responseDate: nil, now: now) == .zero)
        #expect(parser.retryAfter("Fri, 06 Nov 2094 08:49:37 GMT", responseDate: nil, now: now) == .seconds(3_600))
    }

    @Test("A maximum delay with a fraction of a second bounds an HTTP-date or Unix time as it bounds delta-seconds")
    func fractionalMaximumBoundsDates() {
        let tenSecondsAhead = "Sun, 06 Nov 1994 08:49:47 GMT"
        for maximum in [Duration.milliseconds(1_500), .milliseconds(200), .seconds(10), .seconds(3_600)] {
            let bounded = RetryHintParser(maximumDelay: maximum)
            let expected = min(maximum, .seconds(10))
            #expect(bounded.retryAfter("10", responseDate: nil, now: now) == expected)
            #expect(bounded.retryAfter(tenSecondsAhead, responseDate: nil, now: now) == expected, "\(maximum)")
            let later = Date(timeIntervalSince1970: 1_700_000_000)
            #expect(bounded.retryDelay(from: ["X-RateLimit-Reset": "1700000010"], now: later) == expected)
        }
        // Against a wall clock part-way through a second, a date is rounded up to whole seconds.
        #expect(parser.retryAfter("Sun, 06 Nov 1994 08:49:38 GMT", responseDate: nil, now: now + 0.25) == .seconds(1))
    }

    @Test("Merged duplicate headers use the first valid value")
    func mergedDuplicates() {
        #expect(parser.retryAfter("120, 120", responseDate: nil, now: now) == .seconds(120))
        #expect(parser.retryAfter("garbage, 30", responseDate: nil, now: now) == .seconds(30))
        #expect(
            parser.retryAfter(
                "Sun, 06 Nov 1994 08:49:47 GMT, Sun, 06 Nov 1994 08:49:47 GMT", responseDate: nil, now: now)
                == .seconds(10))
        let headers = HTTPHeaders([.init(name: "Retry-After", value: "-1"), .init(name: "retry-after", value: "7")])
        #expect(parser.retryDelay(from: headers, now: now) == .seconds(7))
    }

    @Test("Hundreds of repeated Retry-After lines (a proxy that copies the header) still give the first value")
    func manyRepeatedLines() {
        let lines = HTTPHeaders(Array(repeating: .init(name: "Retry-After", value: "120"), count: 300))
        #expect(parser.retryDelay(from: lines, now: now) == .seconds(120))
        let merged = Array(repeating: "Sun, 06 Nov 1994 08:49:47 GMT", count: 100).joined(separator: ", ")
        #expect(parser.retryAfter(merged, responseDate: nil, now: now) == .seconds(10))
        // A megabyte of commas and garbage is looked at piece by piece, never all of it, and gives nothing.
        #expect(parser.retryAfter(String(repeating: "x, ", count: 350_000), responseDate: nil, now: now) == nil)
    }

    @Test("Secondary hints: RateLimit draft fields, RateLimit-Reset, X-RateLimit-Reset; Retry-After wins")
    func secondaryHints() {
        #expect(parser.retryDelay(from: ["RateLimit": "limit=100, remaining=0, reset=30"], now: now) == .seconds(30))
        #expect(parser.retryDelay(from: ["RateLimit": #""default";r=0;t=12"#], now: now) == .seconds(12))
        #expect(
            parser.retryDelay(
                from: ["RateLimit": #""default";r=0"#, "RateLimit-Policy": #""default";q=100;w=60"#], now: now)
                == .seconds(60))
        #expect(parser.retryDelay(from: ["RateLimit-Reset": "45"], now: now) == .seconds(45))
        #expect(parser.retryDelay(from: ["X-RateLimit-Reset": "20"], now: now) == .seconds(20))
        let later = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(parser.retryDelay(from: ["X-RateLimit-Reset": "1700000060"], now: later) == .seconds(60))
        #expect(
            parser.retryDelay(
                from: ["X-RateLimit-Reset": "1445412510", "Date": "Wed, 21 Oct 2015 07:28:00 GMT"], now: now)
                == .seconds(30))
        #expect(
            parser.retryDelay(from: ["Retry-After": "5", "RateLimit-Reset": "45", "X-RateLimit-Reset": "9"], now: now)
                == .seconds(5))
        #expect(parser.retryDelay(from: ["RateLimit": "reset=abc", "X-RateLimit-Reset": "-3"], now: now) == nil)
        #expect(parser.retryDelay(from: ["Retry-After": "later", "X-RateLimit-Reset": "4"], now: now) == .seconds(4))
        #expect(parser.retryDelay(from: [:], now: now) == nil)
    }

    @Test("RateLimit-Reset as a Unix time (GitLab sends one) is measured against Date, not clamped to an hour")
    func unixTimeRateLimitReset() {
        let later = Date(timeIntervalSince1970: 1_700_000_000)
        let gitLab: HTTPHeaders = [
            "RateLimit-Limit": "600", "RateLimit-Remaining": "0", "RateLimit-Reset": "1700000042",
            "Date": "Tue, 14 Nov 2023 22:13:20 GMT",
        ]
        #expect(parser.retryDelay(from: gitLab, now: later.addingTimeInterval(-500)) == .seconds(42))
        #expect(parser.retryDelay(from: ["RateLimit-Reset": "1700000030"], now: later) == .seconds(30))
    }

    @Test("A reset is no hint while its remaining count says calls are left (GitHub sends both on every response)")
    func resetWithCallsLeftIsNoHint() throws {
        let later = Date(timeIntervalSince1970: 1_700_000_000)
        let github: HTTPHeaders = [
            "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": "1700002400",
            "Date": "Tue, 14 Nov 2023 22:13:20 GMT",
        ]
        #expect(parser.retryDelay(from: github, now: later) == nil)
        #expect(parser.retryDelay(from: ["RateLimit-Remaining": "12", "RateLimit-Reset": "45"], now: now) == nil)
        // Spent, it is the wait.
        #expect(
            parser.retryDelay(from: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "20"], now: now) == .seconds(20)
        )
        #expect(
            parser.retryDelay(from: ["RateLimit-Remaining": "0", "RateLimit-Reset": "45"], now: now) == .seconds(45))
        // A 503 from such a server is a server error with no wait, retried after the backoff.
        let response = HTTPResponse(status: 503, headers: github)
        let url = try #require(URL(string: "https://api.github.com/repos"))
        let classification = TransportErrorClassifier.standard.classify(
            HTTPStatusError(response: response, request: HTTPRequest(url: url)))
        #expect(classification?.category == .serverError)
        #expect(classification?.retryAfter == nil)
    }

    @Test("RateLimit is read as a structured field: a hint only when the quota is spent; malformed is ignored")
    func rateLimitStructuredField() {
        // The most restrictive policy decides: spent, so its reset is the delay.
        #expect(
            parser.retryDelay(from: ["RateLimit": #""hour";r=40;t=600, "minute";r=0;t=20"#], now: now) == .seconds(20))
        // Quota left: no delay from RateLimit, the next hint applies.
        #expect(parser.retryDelay(from: ["RateLimit": #""default";r=5;t=30"#], now: now) == nil)
        #expect(
            parser.retryDelay(from: ["RateLimit": #""default";r=5;t=30"#, "RateLimit-Reset": "7"], now: now)
                == .seconds(7))
        // Not a structured field (unterminated string, a decimal r): ignored whole.
        #expect(parser.retryDelay(from: ["RateLimit": #""default;r=0;t=9"#], now: now) == nil)
        #expect(parser.retryDelay(from: ["RateLimit": #""default";r=0.0;t=9"#], now: now) == nil)
        // Retry-After still wins over a valid RateLimit field.
        #expect(
            parser.retryDelay(from: ["Retry-After": "3", "RateLimit": #""default";r=0;t=30"#], now: now) == .seconds(3))
        // Resets are clamped to the parser's maximum delay.
        #expect(parser.retryDelay(from: ["RateLimit": #""d";r=0;t=86400"#], now: now) == .seconds(3_600))
    }
}
