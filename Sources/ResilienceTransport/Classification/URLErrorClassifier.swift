import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Classifies `URLError`s (and `NSError`s in `NSURLErrorDomain`) by ResilienceKit's own table, the same on
/// every platform.
///
/// Linux's FoundationNetworking reports several distinct failures as `URLError.unknown` (-1) or reuses codes
/// with another meaning (an empty reply is `-1011`, a non-HTTP reply `-1002`); the table reads the failure's
/// description to tell them apart (see `Docs/Transport.md`). The table is keyed by `URLError.Code` raw
/// values, never by the `NSURLError…` constants, some of which are off by one on Linux
/// (`NSURLErrorSecureConnectionFailed` is -1201 there, -1200 on Apple platforms).
public struct URLErrorClassifier: ErrorClassifier {
    /// Creates the classifier.
    public init() {}

    /// The classification of a URL error, or nil for other errors.
    public func classify(_ error: any Error) -> FailureClassification? {
        if let urlError = error as? URLError {
            return Self.classification(code: urlError.errorCode, message: Self.message(of: urlError as NSError))
        }
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else { return nil }
        return Self.classification(code: nsError.code, message: Self.message(of: nsError))
    }

    static func message(of error: NSError) -> String {
        var parts = [error.localizedDescription]
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            parts.append(underlying.localizedDescription)
        }
        return parts.joined(separator: " | ")
    }

    /// The table: a `URLError` code (and, for ambiguous codes, its description) to a classification.
    public static func classification(code: Int, message: String?) -> FailureClassification {
        let text = message?.lowercased() ?? ""
        func make(
            _ category: FailureCategory, _ failureCode: FailureCode, transient: Bool? = nil, notSent: Bool = false,
            level: LogLevel = .warning
        ) -> FailureClassification {
            FailureClassification(
                category: category, code: failureCode, isTransient: transient, logLevel: level, message: message,
                requestWasNotSent: notSent)
        }
        switch code {
        case URLError.Code.cancelled.rawValue:
            return .cancelled
        case URLError.Code.timedOut.rawValue:
            return make(.timeout, .timedOut)
        case URLError.Code.cannotFindHost.rawValue, URLError.Code.dnsLookupFailed.rawValue:
            return make(.networkUnreachable, .hostNotFound, notSent: true)
        case URLError.Code.cannotConnectToHost.rawValue:
            if let failure = failureAfterConnecting(text, message: message) { return failure }
            return make(.transient, .connectionRefused, notSent: true)
        case URLError.Code.networkConnectionLost.rawValue:
            return make(.transient, .connectionReset)
        case URLError.Code.notConnectedToInternet.rawValue, URLError.Code.internationalRoamingOff.rawValue,
            URLError.Code.callIsActive.rawValue,
            URLError.Code.dataNotAllowed.rawValue, URLError.Code.cannotLoadFromNetwork.rawValue:
            return make(.networkUnreachable, .noConnection, notSent: true)
        case URLError.Code.badServerResponse.rawValue:
            if text.contains("empty reply") { return make(.transient, .emptyReply) }
            return make(.invalidResponse, .invalidResponse, transient: false)
        case URLError.Code.unsupportedURL.rawValue:
            if text.contains("http/0.9") || text.contains("weird server reply") {
                return make(.invalidResponse, .invalidResponse, transient: false)
            }
            return make(.clientError, .invalidFormat, transient: false, notSent: true)
        case URLError.Code.badURL.rawValue, URLError.Code.requestBodyStreamExhausted.rawValue,
            URLError.Code.redirectToNonExistentLocation.rawValue:
            return make(.clientError, .invalidFormat, transient: false, notSent: true)
        case URLError.Code.httpTooManyRedirects.rawValue:
            return make(.invalidResponse, .tooManyRedirects, transient: false)
        case URLError.Code.appTransportSecurityRequiresSecureConnection.rawValue:
            return make(.insecureTransport, .insecureTransportBlocked, transient: false, notSent: true, level: .error)
        case URLError.Code.secureConnectionFailed.rawValue, URLError.Code.serverCertificateHasBadDate.rawValue,
            URLError.Code.serverCertificateUntrusted.rawValue, URLError.Code.serverCertificateHasUnknownRoot.rawValue,
            URLError.Code.serverCertificateNotYetValid.rawValue, URLError.Code.clientCertificateRejected.rawValue,
            URLError.Code.clientCertificateRequired.rawValue:
            return make(.invalidResponse, .certificateInvalid, transient: false, level: .error)
        case URLError.Code.zeroByteResource.rawValue, URLError.Code.cannotDecodeRawData.rawValue,
            URLError.Code.cannotDecodeContentData.rawValue,
            URLError.Code.cannotParseResponse.rawValue:
            return make(.invalidResponse, .invalidResponse, transient: false)
        case URLError.Code.dataLengthExceedsMaximum.rawValue:
            return make(.invalidResponse, .responseTooLarge, transient: false)
        case URLError.Code.resourceUnavailable.rawValue:
            return make(.transient, .serverUnavailable)
        case URLError.Code.unknown.rawValue:
            return classifyUnknown(text, message: message)
        default:
            return make(.unknown, .unknown, transient: false, level: .error)
        }
    }

    /// The failure a `cannotConnectToHost` (-1004) names when its message is not a failed connection's, or nil.
    ///
    /// FoundationNetworking reports a task's failure as -1004 whenever libcurl's last connect `errno` is
    /// `ECONNREFUSED`, whatever failed, and that `errno` outlives a refused address followed by one that connected
    /// (`localhost`'s `::1` refused by a server that listens on `127.0.0.1` only): an empty reply to a request that
    /// was sent, a transfer that timed out or a reset HTTP/2 stream then arrive as -1004 too, with curl's message.
    /// A message that names no failed connection (curl's `Failed to connect to …`, Apple's `Could not connect to
    /// the server.`) but a failure this table knows is classified as that failure, as the code FoundationNetworking
    /// gives it without that `errno` would be, and is not marked as not sent.
    private static func failureAfterConnecting(_ text: String, message: String?) -> FailureClassification? {
        let failedConnection = ["connect to", "couldn't connect", "could not connect", "connection refused"]
        guard !text.isEmpty, !failedConnection.contains(where: text.contains) else { return nil }
        if text.contains("empty reply") || text.contains("server returned nothing") {
            return FailureClassification(category: .transient, code: .emptyReply, message: message)
        }
        if text.contains("http/0.9") || text.contains("weird server reply") {
            return classification(code: URLError.Code.unsupportedURL.rawValue, message: message)
        }
        if text.contains("timed out") || text.contains("timeout was reached") {
            return classification(code: URLError.Code.timedOut.rawValue, message: message)
        }
        let named = classifyUnknown(text, message: message)
        return named.category == .unknown ? nil : named
    }

    /// Linux reports curl failures it has no code for as -1; their text says what happened.
    ///
    /// HTTP/2 failures (`CURLE_HTTP2` "Error in the HTTP2 framing layer", which a GOAWAY mid-request gives, and
    /// `CURLE_HTTP2_STREAM` "Stream error in the HTTP/2 framing layer" or "HTTP/2 stream N was not closed
    /// cleanly") have no `URLError` code of their own on Linux either: FoundationNetworking maps every curl code
    /// outside its small table to -1. They are transient like a reset connection; a stream the server refused
    /// ("HTTP/2 stream N was refused") was never processed, so it is marked not sent. A response header longer
    /// than libcurl accepts (100 KB: a huge `Location`, say) is `CURLE_OUT_OF_MEMORY` ("Out of memory") before
    /// libcurl 8.6 and `CURLE_TOO_LARGE` since: the server's invalid response, as AsyncHTTPClient's header
    /// overflow is.
    private static func classifyUnknown(_ text: String, message: String?) -> FailureClassification {
        if text.contains("http/2 stream"), text.contains("refused") {
            return FailureClassification(
                category: .transient, code: .connectionReset, message: message, requestWasNotSent: true)
        }
        if text.contains("http2 framing layer") || text.contains("http/2 framing layer")
            || text.contains("http/2 stream")
        {
            return FailureClassification(category: .transient, code: .connectionReset, message: message)
        }
        if text.contains("transfer closed") || text.contains("bytes remaining") || text.contains("partial file") {
            return FailureClassification(category: .transient, code: .truncatedResponse, message: message)
        }
        if text.contains("ssl") || text.contains("tls") || text.contains("certificate") {
            return FailureClassification(
                category: .invalidResponse, code: .certificateInvalid, isTransient: false, logLevel: .error,
                message: message)
        }
        if text.contains("reset") || text.contains("recv failure") || text.contains("send failure") {
            return FailureClassification(category: .transient, code: .connectionReset, message: message)
        }
        if text.contains("empty reply") {
            return FailureClassification(category: .transient, code: .emptyReply, message: message)
        }
        if text.contains("out of memory") || text.contains("grew larger than allowed") {
            return FailureClassification(
                category: .invalidResponse, code: .invalidResponse, isTransient: false,
                message: "a response header was larger than libcurl accepts (\(message ?? "no message"))")
        }
        return FailureClassification(
            category: .unknown, code: .unknown, isTransient: false, logLevel: .error, message: message)
    }
}
