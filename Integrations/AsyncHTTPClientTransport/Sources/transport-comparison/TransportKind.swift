import AsyncHTTPClient
import Foundation
import ResilienceAsyncHTTPClient
import ResilienceTransport

/// The two transports compared.
enum TransportKind: String, CaseIterable {
    case urlSession = "urlsession"
    case asyncHTTPClient = "ahc"

    var title: String {
        switch self {
        case .urlSession: "URLSessionTransport"
        case .asyncHTTPClient: "AsyncHTTPClientTransport"
        }
    }

    /// A transport with the standard configuration (10 MB cap, 8 connections per host) and how to close it.
    func make() -> (any HTTPTransport, @Sendable () async -> Void) {
        switch self {
        case .urlSession:
            return (URLSessionTransport(), {})
        case .asyncHTTPClient:
            let transport = AsyncHTTPClientTransport(
                configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
            return (transport, { try? await transport.shutdown() })
        }
    }
}
