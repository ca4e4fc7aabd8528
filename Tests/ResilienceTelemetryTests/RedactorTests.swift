import ResilienceCore
import Testing

@Suite("Redactor")
struct RedactorTests {
    let redactor = Redactor.standard

    @Test(
        "Secrets in text are replaced, the rest is kept",
        arguments: [
            (
                "https://api.example.com/jobs?api_key=abc123&page=2",
                "https://api.example.com/jobs?api_key=[REDACTED]&page=2"
            ),
            ("GET /v1?token=t0k&access_token=a.b.c#frag", "GET /v1?token=[REDACTED]&access_token=[REDACTED]#frag"),
            ("https://x.io/?key=K&q=swift", "https://x.io/?key=[REDACTED]&q=swift"),
            ("https://x.io/?APIKEY=K", "https://x.io/?APIKEY=[REDACTED]"),
            ("client_secret=s3cr3t&grant_type=refresh", "client_secret=[REDACTED]&grant_type=refresh"),
            ("Authorization: Bearer eyJhbGciOi.payload.sig", "Authorization: [REDACTED]"),
            ("sent Bearer abc.def to server", "sent Bearer [REDACTED] to server"),
            ("Cookie: session=abc; theme=dark\nAccept: */*", "Cookie: [REDACTED]\nAccept: */*"),
            ("set-cookie: id=42; HttpOnly", "set-cookie: [REDACTED]"),
            ("https://alice:pa55@host.example.com/feed", "https://[REDACTED]@host.example.com/feed"),
            ("{\"refresh_token\":\"r-123\",\"user\":\"bob\"}", "{\"refresh_token\":\"[REDACTED]\",\"user\":\"bob\"}"),
            ("password=\"hunter 2\" ok", "password=\"[REDACTED]\" ok"),
            ("password=\"hun\\\"ter2\" ok", "password=\"[REDACTED]\" ok"),
            ("{\"password\":\"a\\\"b,c\",\"user\":\"bob\"}", "{\"password\":\"[REDACTED]\",\"user\":\"bob\"}"),
            (
                "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=deadbeef&X-Amz-Expires=60",
                "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=[REDACTED]&X-Amz-Expires=60"
            ),
            ("https://g.io/o?X-Goog-Signature=0a1b&alt=media", "https://g.io/o?X-Goog-Signature=[REDACTED]&alt=media"),
            ("plain text without secrets", "plain text without secrets"),
            ("timeout at 12:30:45 code=NET_002", "timeout at 12:30:45 code=NET_002"),
        ])
    func text(input: String, expected: String) {
        #expect(redactor.redact(input) == expected)
    }

    @Test("Credential headers are redacted in HTTPHeaders, others kept")
    func headers() {
        let headers: HTTPHeaders = [
            "Authorization": "Basic dXNlcjpwYXNz", "Cookie": "a=b", "Set-Cookie": "c=d", "X-API-Key": "k",
            "Accept": "application/json", "Referer": "https://x.io/?token=zzz",
        ]
        let redacted = redactor.redact(headers)
        #expect(redacted["authorization"] == "[REDACTED]")
        #expect(redacted["cookie"] == "[REDACTED]")
        #expect(redacted["set-cookie"] == "[REDACTED]")
        #expect(redacted["x-api-key"] == "[REDACTED]")
        #expect(redacted["accept"] == "application/json")
        #expect(redacted["referer"] == "https://x.io/?token=[REDACTED]")
    }

    @Test("Events: key, operation, detail and message are redacted")
    func events() {
        let event = ResilienceEvent(
            kind: .attemptFailed, key: "https://u:p@h", operation: "op?token=1", time: .origin,
            classification: FailureClassification(category: .authentication, code: .unauthorized, message: "Bearer x"),
            detail: "api_key=2")
        let redacted = redactor.redact(event)
        #expect(redacted.key == "https://[REDACTED]@h")
        #expect(redacted.operation == "op?token=[REDACTED]")
        #expect(redacted.detail == "api_key=[REDACTED]")
        #expect(redacted.classification?.message == "Bearer [REDACTED]")
    }

    @Test("Hostile input does not crash")
    func hostile() {
        for input in ["=", ":", "@", "://@", "token=", "Bearer ", "a=\"", "Authorization:", "\u{0}=\u{FFFF}", "é=ü"] {
            _ = redactor.redact(input)
        }
        let long = String(repeating: "token=x&", count: 10_000)
        #expect(!redactor.redact(long).contains("=x"))
    }
}
