import Foundation

/// One scripted behaviour of a ``FaultServer`` route, modelled on Toxiproxy's toxics.
///
/// A struct with static members (an open set): build faults with `.status(503)`, `.reset`, `.slowDrip(…)`,
/// `.delayed(by:then:)` and friends, and script a route with a sequence of them.
public struct Fault: Sendable, CustomStringConvertible {
    indirect enum Kind: Sendable {
        case respond(status: Int, headers: HTTPHeaders, body: Data)
        case delayed(Duration, Kind)
        case randomlyDelayed(minimum: Duration, maximum: Duration, Kind)
        case hang
        case slowDrip(status: Int, body: Data, chunkSize: Int, interval: Duration)
        case truncated(status: Int, body: Data, declaredLength: Int)
        case reset
        case emptyReply
        case garbage(Data)
        case redirect(status: Int, location: String)
        case gzipBomb(decompressedSize: Int)
        case hugeBody(size: Int)
        case chunkedBody(size: Int, gzip: Bool)
        case chaos(ChaosProfile)
        case mutationSink(status: Int, body: Data, afterFirstApply: Kind?)
        case requireHeader(name: String, values: Set<String>, then: Kind, otherwise: Kind)
        case slowClose(Duration, Kind)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// A short name for logs and test output.
    public var description: String { Self.name(of: kind) }

    static func name(of kind: Kind) -> String {
        switch kind {
        case .respond(let status, _, _): "respond(\(status))"
        case .delayed(let delay, let next): "delayed(\(delay), \(name(of: next)))"
        case .randomlyDelayed(let low, let high, let next): "randomlyDelayed(\(low)...\(high), \(name(of: next)))"
        case .hang: "hang"
        case .slowDrip(let status, let body, _, _): "slowDrip(\(status), \(body.count) bytes)"
        case .truncated(_, let body, let declared): "truncated(\(body.count) of \(declared))"
        case .reset: "reset"
        case .emptyReply: "emptyReply"
        case .garbage: "garbage"
        case .redirect(let status, let location): "redirect(\(status) → \(location))"
        case .gzipBomb(let size): "gzipBomb(\(size))"
        case .hugeBody(let size): "hugeBody(\(size))"
        case .chunkedBody(let size, let gzip): "chunkedBody(\(size)\(gzip ? ", gzip" : ""))"
        case .chaos: "chaos"
        case .mutationSink(let status, _, _): "mutationSink(\(status))"
        case .requireHeader(let header, _, let then, _): "requireHeader(\(header), \(name(of: then)))"
        case .slowClose(let delay, let next): "slowClose(\(delay), \(name(of: next)))"
        }
    }
}

extension Fault {
    /// Answers with `status`, `headers` and `body` (Content-Length is added).
    public static func respond(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) -> Fault {
        Fault(.respond(status: status, headers: headers, body: body))
    }

    /// Answers with `status` and a UTF-8 text `body`.
    public static func status(_ status: Int, headers: HTTPHeaders = [:], body: String = "") -> Fault {
        respond(status: status, headers: headers, body: Data(body.utf8))
    }

    /// `200 OK` with a UTF-8 `body`.
    public static func ok(_ body: String = "ok", headers: HTTPHeaders = [:]) -> Fault {
        status(200, headers: headers, body: body)
    }

    /// A JSON document with `status` (`Content-Type: application/json`).
    public static func json(_ json: String, status: Int = 200, headers: HTTPHeaders = [:]) -> Fault {
        var headers = headers
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        return respond(status: status, headers: headers, body: Data(json.utf8))
    }

    /// `409 Conflict` with an RFC 9457 problem saying a request with the same `Idempotency-Key` is still being
    /// processed (the IETF Idempotency-Key draft's meaning): retry later with the same key.
    public static let idempotencyKeyInUse = json(
        #"{"type":"https://faultserver.test/problems/idempotency-key-in-use","title":"A request with this Idempotency-Key is still in progress","status":409}"#,
        status: 409, headers: ["Content-Type": "application/problem+json"])

    /// `409 Conflict` with an RFC 9457 problem confirming the entity already exists (a duplicate create).
    public static let alreadyExists = json(
        #"{"type":"https://faultserver.test/problems/already-exists","title":"The entity already exists","status":409}"#,
        status: 409, headers: ["Content-Type": "application/problem+json"])

    /// `429 Too Many Requests` with a `Retry-After` value (delta-seconds or an HTTP-date, sent verbatim).
    public static func rateLimited(retryAfter: String, headers: HTTPHeaders = [:]) -> Fault {
        var headers = headers
        headers.add(name: "Retry-After", value: retryAfter)
        return status(429, headers: headers, body: "rate limited")
    }

    /// Waits `delay` (fixed latency), then behaves like `fault`.
    public static func delayed(by delay: Duration, then fault: Fault = .ok()) -> Fault {
        Fault(.delayed(delay, fault.kind))
    }

    /// Waits a random time in `minimum...maximum` (seeded by the server), then behaves like `fault`.
    public static func randomlyDelayed(
        between minimum: Duration, and maximum: Duration, then fault: Fault = .ok()
    ) -> Fault {
        Fault(.randomlyDelayed(minimum: minimum, maximum: maximum, fault.kind))
    }

    /// Reads the request and never answers (until the client leaves or the server stops).
    public static let hang = Fault(.hang)

    /// Sends headers at once, then the body `chunkSize` bytes at a time every `interval`.
    public static func slowDrip(
        status: Int = 200, body: Data, chunkSize: Int = 1, interval: Duration = .milliseconds(100)
    ) -> Fault {
        Fault(.slowDrip(status: status, body: body, chunkSize: max(1, chunkSize), interval: interval))
    }

    /// Declares `declaredLength` bytes in Content-Length, sends only `body`, then closes.
    public static func truncated(status: Int = 200, body: Data, declaredLength: Int) -> Fault {
        Fault(.truncated(status: status, body: body, declaredLength: max(declaredLength, body.count + 1)))
    }

    /// Reads the request, then closes with `SO_LINGER` 0 so the client sees a TCP reset.
    public static let reset = Fault(.reset)

    /// Reads the request, then closes cleanly without sending a byte.
    public static let emptyReply = Fault(.emptyReply)

    /// Answers with bytes that are not HTTP, then closes.
    public static func garbage(
        _ bytes: Data = Data("SSH-2.0-OpenSSH_9.0 \u{0}\u{1}\u{2}garbage\r\n\r\n".utf8)
    )
        -> Fault
    { Fault(.garbage(bytes)) }

    /// A redirect (`302` by default) to `location`: a path on this server or an absolute URL (another server).
    public static func redirect(to location: String, status: Int = 302) -> Fault {
        Fault(.redirect(status: status, location: location))
    }

    /// A gzip body (`Content-Encoding: gzip`) that is small on the wire but inflates to `decompressedSize`
    /// zero bytes.
    public static func gzipBomb(decompressedSize: Int = 100 * 1024 * 1024) -> Fault {
        Fault(.gzipBomb(decompressedSize: max(1, decompressedSize)))
    }

    /// `200 OK` with a body of `size` bytes, streamed without buffering it.
    public static func hugeBody(size: Int = 200 * 1024 * 1024) -> Fault { Fault(.hugeBody(size: max(0, size))) }

    /// `200 OK` with `Transfer-Encoding: chunked` and no length: `size` bytes streamed in 64 KB chunks, or, with
    /// `gzip`, a gzip body (`Content-Encoding: gzip`) inflating to `size` zero bytes, sent in chunks.
    public static func chunkedBody(size: Int = 200 * 1024 * 1024, gzip: Bool = false) -> Fault {
        Fault(.chunkedBody(size: max(0, size), gzip: gzip))
    }

    /// `200 OK` with JSON that does not parse.
    public static let malformedJSON = json(#"{"jobs": [{"id": 1, "title": "Swift"#)

    /// `200 OK` with XML that does not parse.
    public static let malformedXML = respond(
        status: 200, headers: ["Content-Type": "application/rss+xml"],
        body: Data("<?xml version=\"1.0\"?><rss><channel><item><title>Swift & Co</title></item></channl></rss>".utf8))

    /// Picks a fault per request at random (seeded by the server) according to `profile`.
    public static func chaos(_ profile: ChaosProfile) -> Fault { Fault(.chaos(profile)) }

    /// An idempotent mutation sink: a POST/PUT/PATCH/DELETE carrying an `Idempotency-Key` is applied at most
    /// once per key (see ``FaultServer/appliedEffects``); a replay gets the original status and body.
    /// Requests without a key are applied every time (counted in ``FaultServer/unkeyedEffects``).
    ///
    /// `afterFirstApply` (for example `.reset` or `.status(503)`) replaces the answer to the request that
    /// first applied a key, simulating a response lost after the server committed the effect.
    public static func mutationSink(
        status: Int = 201, body: String = #"{"applied":true}"#, afterFirstApply: Fault? = nil
    )
        -> Fault
    { Fault(.mutationSink(status: status, body: Data(body.utf8), afterFirstApply: afterFirstApply?.kind)) }

    /// Behaves like `then` when the request's `name` header has one of `values`, else like `otherwise`
    /// (`401` by default): a protected resource for credential tests.
    public static func requireHeader(
        _ name: String = "Authorization", oneOf values: Set<String>, then: Fault = .ok(),
        otherwise: Fault = .status(401, body: #"{"detail":"token expired","code":"TOKEN_EXPIRED"}"#)
    ) -> Fault {
        Fault(.requireHeader(name: name, values: values, then: then.kind, otherwise: otherwise.kind))
    }
}
