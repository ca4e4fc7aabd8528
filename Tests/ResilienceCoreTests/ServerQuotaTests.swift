import Foundation
import ResilienceCore
import Testing

@Suite("ServerQuota header parsing")
struct ServerQuotaTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    func quota(_ fields: [(String, String)], date: Date? = nil) -> ServerQuota? {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name: name, value: value) }
        return ServerQuota(headers: headers, responseDate: date, now: Self.now)
    }

    @Test func structuredRateLimitField() {
        #expect(quota([("RateLimit", #""default";r=0;t=10"#)]) == ServerQuota(remaining: 0, resetAfter: .seconds(10)))
        let withPolicy = quota([("RateLimit", #""day";r=5"#), ("RateLimit-Policy", #""day";q=100;w=86400"#)])
        #expect(withPolicy == ServerQuota(remaining: 5, resetAfter: .seconds(86_400), limit: 100))
        let mostRestrictive = quota([("RateLimit", #""hour";r=40;t=600, "minute";r=0;t=20"#)])
        #expect(mostRestrictive == ServerQuota(remaining: 0, resetAfter: .seconds(20)))
    }

    @Test("Of several spent policies, the one that resets last wins, whatever their order")
    func severalSpentPolicies() {
        let spentHour = ServerQuota(remaining: 0, resetAfter: .seconds(600))
        #expect(quota([("RateLimit", #""minute";r=0;t=20, "hour";r=0;t=600"#)]) == spentHour)
        #expect(quota([("RateLimit", #""hour";r=0;t=600, "minute";r=0;t=20"#)]) == spentHour)
        // A spent policy whose reset is known says more than one whose reset is not.
        #expect(
            quota([("RateLimit", #""day";r=0, "minute";r=0;t=20"#)])
                == ServerQuota(remaining: 0, resetAfter: .seconds(20)))
    }

    @Test(
        "Policies are matched to RateLimit-Policy by name in linear time: 20,000 of each are read at once",
        .timeLimit(.minutes(1)))
    func manyPoliciesAreMatchedLinearly() {
        let count = 20_000
        let rateLimit = (0..<count).map { #""p\#($0)";r=\#($0 + 1)"# }.joined(separator: ", ")
        let policies = (0..<count).map { #""p\#(count - 1 - $0)";q=\#(count - $0);w=60"# }.joined(separator: ", ")
        #expect(rateLimit.utf8.count + policies.utf8.count > 700_000)
        #expect(
            quota([("RateLimit", rateLimit), ("RateLimit-Policy", policies)])
                == ServerQuota(remaining: 1, resetAfter: .seconds(60), limit: 1))
    }

    @Test func olderDraftRateLimitField() {
        #expect(
            quota([("RateLimit", "limit=100, remaining=0, reset=30")])
                == ServerQuota(remaining: 0, resetAfter: .seconds(30), limit: 100))
    }

    @Test func separateFields() {
        #expect(
            quota([("RateLimit-Remaining", "3"), ("RateLimit-Reset", "7"), ("RateLimit-Limit", "10")])
                == ServerQuota(remaining: 3, resetAfter: .seconds(7), limit: 10))
        #expect(
            quota([("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "15")])
                == ServerQuota(remaining: 0, resetAfter: .seconds(15)))
    }

    @Test("Leading zeros are not digits of the value: 00000000000015 is 15, not garbage")
    func leadingZeros() {
        #expect(
            quota([("X-RateLimit-Remaining", "0000000000000"), ("X-RateLimit-Reset", "00000000000015")])
                == ServerQuota(remaining: 0, resetAfter: .seconds(15)))
        #expect(
            quota([("RateLimit-Remaining", "0003"), ("RateLimit-Reset", "007"), ("RateLimit-Limit", "00000000000010")])
                == ServerQuota(remaining: 3, resetAfter: .seconds(7), limit: 10))
        #expect(quota([("X-RateLimit-Remaining", "0" + String(repeating: "9", count: 13))]) == nil)
    }

    @Test("X-RateLimit-Reset as a Unix time is measured against the response's Date, else now")
    func unixTimeReset() {
        let fields = [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1700000042")]
        #expect(quota(fields)?.resetAfter == .seconds(42))
        #expect(quota(fields, date: Self.now.addingTimeInterval(40))?.resetAfter == .seconds(2))
        #expect(quota(fields, date: Self.now.addingTimeInterval(100))?.resetAfter == .zero)
    }

    @Test("RateLimit-Reset as a Unix time (GitLab sends one) is the time until it, not a delay of 53 years")
    func unixTimeRateLimitReset() {
        let gitLab = [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "1700000042"), ("RateLimit-Limit", "600")]
        #expect(quota(gitLab) == ServerQuota(remaining: 0, resetAfter: .seconds(42), limit: 600))
        #expect(quota(gitLab, date: Self.now.addingTimeInterval(40))?.resetAfter == .seconds(2))
        // A delta below 1,000,000,000 s is still a delta.
        #expect(
            quota([("RateLimit-Remaining", "0"), ("RateLimit-Reset", "999999999")])?.resetAfter == .seconds(86_400))
    }

    @Test func garbageIsIgnored() {
        #expect(quota([("RateLimit", "r=-1;t=abc")]) == nil)
        #expect(quota([("X-RateLimit-Remaining", "zero")]) == nil)
        #expect(quota([("RateLimit", String(repeating: "r=1;", count: 5_000))]) == nil)
        #expect(quota([("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "99999999999999999")])?.resetAfter == nil)
        #expect(
            quota([("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "99999999999")])?.resetAfter
                == ServerQuota.maximumReset)
        #expect(quota([]) == nil)
        // Found by the RateLimitFieldsFuzzer: an empty key crashed the old hand-written parameter parser.
        #expect(quota([("RateLimit", "=")]) == nil)
        // Not structured fields (an empty key, a trailing comma): ignored whole, as the RateLimit draft requires.
        #expect(quota([("RateLimit", "r=0;=;t=1, =5")]) == nil)
        #expect(quota([("RateLimit-Policy", "="), ("RateLimit", "remaining=2,;=")]) == nil)
        // A malformed RateLimit-Policy is ignored; the RateLimit field still counts.
        #expect(quota([("RateLimit-Policy", "="), ("RateLimit", "remaining=2")]) == ServerQuota(remaining: 2))
    }

    @Test("RateLimit follows RFC 9651: items whose r is not a non-negative integer are skipped")
    func structuredFieldRules() {
        #expect(
            quota([("RateLimit", #""a";r=-1;t=5, "b";r=3;t=9, "c";r=1.5, "d";r="0""#)])
                == ServerQuota(remaining: 3, resetAfter: .seconds(9)))
        #expect(quota([("RateLimit", #""a";r=-1, "b";r=?1"#)]) == nil)
        // Several field lines are one list; the policy with the same name gives limit and window.
        #expect(
            quota([
                ("RateLimit", #""hour";r=40"#), ("RateLimit", #""minute";r=2"#),
                ("RateLimit-Policy", #""hour";q=1000;w=3600, "minute";q=60;w=60"#),
            ]) == ServerQuota(remaining: 2, resetAfter: .seconds(60), limit: 60))
        // Integers beyond 15 digits are not structured-field integers.
        #expect(quota([("RateLimit", #""a";r=1234567890123456"#)]) == nil)
        // Older draft: a Dictionary with RateLimit-Policy's window.
        #expect(
            quota([("RateLimit", "limit=10, remaining=0"), ("RateLimit-Policy", "10;w=60")])
                == ServerQuota(remaining: 0, resetAfter: .seconds(60), limit: 10))
        // A one-megabyte field is parsed in linear time and ignored when malformed.
        let huge = String(repeating: #""p";r=1, "#, count: 100_000) + "!"
        #expect(quota([("RateLimit", huge)]) == nil)
    }
}
