import Foundation
import ResilienceTransport

/// The redirect rules of one request, as a value: hop limit, loop detection, no https→http downgrade, and
/// credential stripping once the chain has left the original origin (scheme, host and port).
struct RedirectRules: Sendable {
    enum Verdict: Equatable {
        case follow(stripCredentials: Bool)
        case refuse(TransportError)
    }

    let originalURL: URL
    let maximumRedirects: Int
    let allowsDowngrade: Bool
    private(set) var redirects = 0
    private(set) var visited: Set<String>
    private(set) var leftOrigin = false

    init(originalURL: URL, maximumRedirects: Int, allowsDowngrade: Bool) {
        self.originalURL = originalURL
        self.maximumRedirects = maximumRedirects
        self.allowsDowngrade = allowsDowngrade
        self.visited = [originalURL.absoluteString]
    }

    /// Decides the hop from `source` to `target`.
    mutating func evaluate(from source: URL, to target: URL) -> Verdict {
        redirects += 1
        if redirects > maximumRedirects { return .refuse(.tooManyRedirects(limit: maximumRedirects, url: target)) }
        if !visited.insert(target.absoluteString).inserted { return .refuse(.redirectLoop(url: target)) }
        let sourceScheme = source.scheme?.lowercased()
        let targetScheme = target.scheme?.lowercased()
        guard targetScheme == "http" || targetScheme == "https" else {
            return .refuse(
                TransportError(
                    FailureClassification(
                        category: .invalidResponse, code: .invalidResponse, isTransient: false,
                        message: "refused a redirect to the unsupported scheme \(targetScheme ?? "none")"),
                    url: target))
        }
        if sourceScheme == "https", targetScheme == "http", !allowsDowngrade {
            return .refuse(.insecureTransport(url: target, reason: "refused a redirect from https to http"))
        }
        if !Self.sameOrigin(originalURL, target) { leftOrigin = true }
        return .follow(stripCredentials: leftOrigin)
    }

    /// Same scheme, host and (effective) port.
    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased() && port(lhs) == port(rhs)
    }

    /// The request for the next hop: 303 (and 301/302 after a POST) become a GET without a body, as browsers
    /// and RFC 9110 §15.4 allow; 307 and 308 keep the method and body. Credentials go when `stripCredentials`.
    static func nextRequest(
        after request: HTTPRequest, status: Int, target: URL, stripCredentials: Bool, credentialHeaders: Set<String>
    ) -> HTTPRequest {
        var next = request
        next.url = target
        let becomesGet =
            status == 303 ? request.method != .head : (status == 301 || status == 302) && request.method == .post
        if becomesGet {
            next.method = .get
            next.body = nil
            for name in ["content-length", "content-type", "transfer-encoding"] { next.headers.remove(name) }
        }
        if stripCredentials {
            for field in request.headers where credentialHeaders.contains(field.name.lowercased()) {
                next.headers.remove(field.name)
            }
        }
        next.headers.remove("host")
        return next
    }
}
