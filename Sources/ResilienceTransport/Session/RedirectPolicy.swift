import Foundation

/// The redirect rules of one request, as a value: hop limit, loop detection, no https→http downgrade, and
/// credential stripping once the chain has left the original origin (scheme, host and port).
struct RedirectPolicy: Sendable {
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
        if source.scheme?.lowercased() == "https", target.scheme?.lowercased() == "http", !allowsDowngrade {
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
}
