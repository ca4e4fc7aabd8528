import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import ResilienceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Classifies the errors AsyncHTTPClient and SwiftNIO throw (`HTTPClientError`, connection, socket, HTTP/1.1
/// parser, HTTP/2, TLS and decompression errors) into ResilienceKit's stable codes, the same ones
/// `URLErrorClassifier` gives for URLSession. Every error is matched by its type and value, never by its text
/// (invalid header names and values, whose value is the fields, by AsyncHTTPClient's own bounded
/// `shortDescription` of those codes).
///
/// ``AsyncHTTPClientTransport`` already throws classified `TransportError`s; use this classifier where
/// AsyncHTTPClient errors reach a pipeline some other way (your own `HTTPClient` calls, an OpenAPI client over
/// AsyncHTTPClient):
///
/// ```swift
/// let classifier = CompositeErrorClassifier([TransportErrorClassifier.standard, AsyncHTTPClientErrorClassifier()])
/// ```
///
/// HTTP/2: a stream the server refused (`REFUSED_STREAM`) was never processed, so it is transient and marked not
/// sent (any method may be retried); any other stream reset, a stream a GOAWAY dropped, or a connection that
/// closed under the stream is transient and marked sent (retried only when the request is idempotent). NIOHTTP2
/// closes the streams above a GOAWAY's last stream id with `CANCEL`, the code a server's own `RST_STREAM(CANCEL)`
/// carries, so the error cannot prove such a request unprocessed. A peer that breaks the HTTP/2 protocol is an invalid response. TLS: a connection closed without
/// `close_notify` is a transient truncation; a failed handshake (an untrusted certificate, no common protocol
/// version or cipher) is `NET_005`, not transient, with BoringSSL's reason in the message.
public struct AsyncHTTPClientErrorClassifier: ErrorClassifier {
    /// Creates the classifier.
    public init() {}

    /// The classification of an AsyncHTTPClient, SwiftNIO, NIOSSL or NIOHTTP2 error, or nil for other errors.
    public func classify(_ error: any Error) -> FailureClassification? {
        switch error {
        case let error as HTTPClientError: Self.classification(of: error)
        case let error as NIOConnectionError: Self.classification(of: error)
        case let error as IOError: Self.classification(errno: error.errnoCode)
        case let error as ChannelError: Self.classification(of: error)
        case let error as HTTPParserError: Self.classification(of: error)
        case let error as NIOHTTPDecompression.DecompressionError: Self.classification(of: error)
        case let error as NIOHTTPDecompression.ExtraDecompressionError:
            error == .truncatedData
                ? Self.make(.transient, .truncatedResponse, "the compressed body ended early")
                : Self.make(.invalidResponse, .invalidResponse, "data after the compressed body", transient: false)
        case let error as NIOSSLError: Self.classification(of: error)
        case let error as BoringSSLError: Self.classification(ofHandshake: error)
        case let error as NIOSSLExtraError: Self.classification(of: error)
        case is NIOSSLCloseTimedOutError:
            Self.make(.transient, .connectionReset, "the TLS connection did not close in time")
        case let error as NIOHTTP2Errors.StreamError: classify(error.baseError)
        case let error as NIOHTTP2Errors.StreamClosed: Self.classification(ofStreamClosedWith: error.errorCode)
        case is NIOHTTP2Errors.IOOnClosedConnection:
            Self.make(.transient, .connectionReset, "the HTTP/2 connection closed under the stream")
        case is NIOHTTP2Errors.NoStreamIDAvailable, is NIOHTTP2Errors.CreatedStreamAfterGoaway:
            Self.make(
                .transient, .connectionReset, "the HTTP/2 connection was going away before the stream opened",
                notSent: true)
        case let error as any NIOHTTP2Error:
            Self.make(
                .invalidResponse, .invalidResponse, "the server broke the HTTP/2 protocol (\(type(of: error)))",
                transient: false)
        default: nil
        }
    }

    // MARK: The tables

    static func make(
        _ category: FailureCategory, _ code: FailureCode, _ message: String, transient: Bool? = nil,
        notSent: Bool = false, level: LogLevel = .warning
    ) -> FailureClassification {
        FailureClassification(
            category: category, code: code, isTransient: transient, logLevel: level, message: message,
            requestWasNotSent: notSent)
    }

    /// `HTTPClientError` by value. Invalid header names or values carry the fields as their value, so they are
    /// recognised by AsyncHTTPClient's own `shortDescription` of those two codes (which never holds a value):
    /// the caller's invalid request, not transient, never sent, with no field value in the message (it may be a
    /// credential). The other codes that carry a value (an unsupported scheme, an application protocol the server
    /// offered) fall to the last case: not transient, AsyncHTTPClient's own description as the message.
    static func classification(of error: HTTPClientError) -> FailureClassification {
        if invalidHeaderFieldLabels.contains(error.shortDescription) {
            return make(
                .clientError, .invalidFormat, "the request is not valid: \(error.shortDescription.lowercased())",
                transient: false, notSent: true)
        }
        switch error {
        case .cancelled, .requestStreamCancelled:
            return .cancelled
        case .readTimeout:
            return make(.timeout, .timedOut, "no response data within the read timeout")
        case .writeTimeout:
            return make(.timeout, .timedOut, "the request could not be written within the write timeout")
        case .deadlineExceeded:
            return make(.timeout, .timedOut, "the request's deadline passed")
        case .connectTimeout:
            return make(.timeout, .timedOut, "the connection was not established in time", notSent: true)
        case .tlsHandshakeTimeout:
            return make(.timeout, .timedOut, "the TLS handshake did not finish in time", notSent: true)
        case .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return make(.timeout, .timedOut, "the proxy handshake did not finish in time", notSent: true)
        case .getConnectionFromPoolTimeout:
            return make(.timeout, .timedOut, "no pooled connection became free in time", notSent: true)
        case .remoteConnectionClosed:
            return make(.transient, .connectionReset, "the server closed the connection")
        case .uncleanShutdown:
            return make(.transient, .truncatedResponse, "the TLS connection closed without close_notify")
        case .redirectLimitReached:
            return make(.invalidResponse, .tooManyRedirects, "too many redirects", transient: false)
        case .redirectCycleDetected:
            return make(.invalidResponse, .tooManyRedirects, "the redirects form a cycle", transient: false)
        case .invalidProxyResponse:
            return make(.invalidResponse, .invalidResponse, "the proxy's response is not valid", transient: false)
        case .proxyAuthenticationRequired:
            return make(
                .authentication, .unauthorized, "the proxy requires authentication", transient: false, notSent: true)
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath, .traceRequestWithBody, .contentLengthMissing,
            .identityCodingIncorrectlyPresent:
            return make(
                .clientError, .invalidFormat, "the request is not valid: \(error)", transient: false, notSent: true)
        case .bodyLengthMismatch, .writeAfterRequestSent:
            // Found while the body streams: the head and part of the body may have reached the server.
            return make(.clientError, .invalidFormat, "the request is not valid: \(error)", transient: false)
        case .alreadyShutdown:
            return make(
                .unknown, .unknown, "the HTTPClient was already shut down", transient: false, notSent: true,
                level: .error)
        default:
            return make(.unknown, .unknown, "\(error)", transient: false, level: .error)
        }
    }

    /// AsyncHTTPClient's `shortDescription`s of the codes for invalid header names and values.
    private static let invalidHeaderFieldLabels: Set<String> = [
        HTTPClientError.invalidHeaderFieldNames([]).shortDescription,
        HTTPClientError.invalidHeaderFieldValues([]).shortDescription,
    ]

    /// A request the client cancelled because it was shut down while the request ran, not because its task was
    /// cancelled (AsyncHTTPClient gives both `HTTPClientError.cancelled`; ``AsyncHTTPClientTransport`` tells them
    /// apart by the task). Not transient: the client will not send again; it may have been sent.
    static let shutDownUnderRequest = make(
        .unknown, .unknown, "the HTTPClient was shut down while the request ran", transient: false, level: .error)

    /// A failed connection attempt (DNS, then every address tried): nothing was sent.
    static func classification(of error: NIOConnectionError) -> FailureClassification {
        classification(ofConnectionFailures: error.connectionErrors.map(\.error), host: error.host, port: error.port)
    }

    /// The failures of the connection attempts to `host`, one per address tried, in order (none: the name did not
    /// resolve): nothing was sent.
    ///
    /// The attempt that got furthest speaks for the host: a refusal (the host answered), then a timeout, then any
    /// other failure, and an unreachable network only when every address was unreachable. Happy eyeballs tries IPv6
    /// first, and a machine without an IPv6 route fails there at once (`ENETUNREACH`) before IPv4 is refused; that
    /// is a refused connection, not an offline network.
    static func classification(
        ofConnectionFailures failures: [any Error], host: String, port: Int
    ) -> FailureClassification {
        let attempts = failures.map { failure -> FailureClassification in
            switch failure {
            case let failure as IOError: Self.classification(errno: failure.errnoCode)
            case let failure as ChannelError: Self.classification(of: failure)
            default: make(.transient, .connectionRefused, "could not connect (\(failure))")
            }
        }
        guard var classification = attempts.min(by: { progress(of: $0) < progress(of: $1) }) else {
            return make(.networkUnreachable, .hostNotFound, "could not resolve \(host)", notSent: true)
        }
        classification.requestWasNotSent = true
        classification.message = "\(classification.message ?? "could not connect") to \(host):\(port)"
        return classification
    }

    /// How far a connection attempt got, lowest first: refused (the host answered), timed out, any other failure,
    /// then an unreachable network.
    private static func progress(of attempt: FailureClassification) -> Int {
        switch attempt.code {
        case .connectionRefused: 0
        case .timedOut: 1
        case .noConnection: 3
        default: 2
        }
    }

    /// A socket error by its `errno`; the message names the failure the code names.
    static func classification(errno code: Int32) -> FailureClassification {
        switch code {
        case ECONNREFUSED:
            return make(.transient, .connectionRefused, "connection refused (ECONNREFUSED)", notSent: true)
        case ECONNRESET:
            return make(.transient, .connectionReset, "connection reset by the peer (ECONNRESET)")
        case EPIPE:
            return make(.transient, .connectionReset, "the connection closed while writing (EPIPE)")
        case ECONNABORTED:
            return make(.transient, .connectionReset, "connection aborted (ECONNABORTED)")
        case ETIMEDOUT:
            return make(.timeout, .timedOut, "the connection timed out (ETIMEDOUT)")
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EADDRNOTAVAIL:
            return make(.networkUnreachable, .noConnection, "the network is unreachable (errno \(code))", notSent: true)
        default:
            return make(.transient, .connectionReset, "socket error (errno \(code))")
        }
    }

    static func classification(of error: ChannelError) -> FailureClassification {
        switch error {
        case .connectTimeout:
            return make(.timeout, .timedOut, "the connection was not established in time", notSent: true)
        case .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed, .eof:
            return make(.transient, .connectionReset, "the connection closed (\(error))")
        case .writeHostUnreachable:
            return make(.networkUnreachable, .noConnection, "the host is unreachable", notSent: true)
        default:
            return make(.unknown, .unknown, "channel error: \(error)", transient: false, level: .error)
        }
    }

    static func classification(of error: HTTPParserError) -> FailureClassification {
        switch error {
        case .invalidEOFState, .closedConnection:
            make(.transient, .truncatedResponse, "the connection closed mid-response (\(error))")
        default:
            make(.invalidResponse, .invalidResponse, "not a valid HTTP response (\(error))", transient: false)
        }
    }

    static func classification(of error: NIOHTTPDecompression.DecompressionError) -> FailureClassification {
        switch error {
        case .limit:
            make(
                .invalidResponse, .responseTooLarge, "the decompressed body exceeded the limit", transient: false)
        case .inflationError, .initializationError:
            make(.invalidResponse, .invalidResponse, "the compressed body does not decode (\(error))", transient: false)
        }
    }

    /// An HTTP/2 stream closed by `RST_STREAM`, or by a GOAWAY that did not cover it (NIOHTTP2 gives it `CANCEL`),
    /// with `code`.
    static func classification(ofStreamClosedWith code: HTTP2ErrorCode) -> FailureClassification {
        switch code {
        case .refusedStream:
            // RFC 9113 §8.7: the server did not process the request; any method may be retried.
            make(
                .transient, .connectionReset, "the server refused the HTTP/2 stream before processing it", notSent: true
            )
        case .cancel:
            // NIOHTTP2 closes the streams a GOAWAY dropped with CANCEL, as a server's RST_STREAM(CANCEL) does.
            make(.transient, .connectionReset, "the HTTP/2 stream was cancelled by a server reset or a GOAWAY")
        case .enhanceYourCalm:
            make(.rateLimited, .rateLimited, "the server reset the HTTP/2 stream with ENHANCE_YOUR_CALM")
        case .protocolError, .compressionError, .frameSizeError, .flowControlError, .settingsTimeout,
            .streamClosed:
            make(.invalidResponse, .invalidResponse, "the HTTP/2 stream failed with \(code)", transient: false)
        case .inadequateSecurity, .http11Required:
            make(.invalidResponse, .invalidResponse, "the server refused the stream: \(code)", transient: false)
        default:
            // NO_ERROR, INTERNAL_ERROR, CONNECT_ERROR: the server stopped mid-request.
            make(.transient, .connectionReset, "the server reset the HTTP/2 stream (\(code))")
        }
    }

    /// TLS: a missing `close_notify` is a truncation; a failed handshake is not transient.
    static func classification(of error: NIOSSLError) -> FailureClassification {
        switch error {
        case .uncleanShutdown:
            return make(.transient, .truncatedResponse, "the TLS connection closed without close_notify")
        case .handshakeFailed(let reason):
            return classification(ofHandshake: reason)
        case .shutdownFailed:
            return make(.transient, .connectionReset, "the TLS connection did not shut down cleanly")
        case .writeDuringTLSShutdown, .readInInvalidTLSState:
            return make(.transient, .connectionReset, "the TLS connection was closing (\(error))")
        case .noSuchFilesystemObject, .failedToLoadCertificate, .failedToLoadPrivateKey,
            .unableToAllocateBoringSSLObject, .cannotFindPeerIP:
            return make(
                .clientError, .invalidFormat, "the client's TLS configuration is not usable (\(error))",
                transient: false, notSent: true, level: .error)
        default:
            return make(
                .invalidResponse, .certificateInvalid, "the server's certificate could not be validated (\(error))",
                transient: false, level: .error)
        }
    }

    /// A handshake the server and client could not complete: an untrusted or expired certificate, no common
    /// protocol version or cipher, a server that does not speak TLS. BoringSSL's reason is in the message.
    static func classification(ofHandshake error: BoringSSLError) -> FailureClassification {
        let reason: String
        switch error {
        case .sslError(let stack), .unknownError(let stack), .invalidSNIName(let stack), .failedToSetALPN(let stack):
            reason = stack.map(\.description).joined(separator: "; ")
        default:
            reason = "\(error)"
        }
        return make(
            .invalidResponse, .certificateInvalid, "the TLS handshake failed: \(reason)", transient: false,
            notSent: true, level: .error)
    }

    static func classification(of error: NIOSSLExtraError) -> FailureClassification {
        switch error {
        case .failedToValidateHostname, .serverHostnameImpossibleToMatch:
            make(
                .invalidResponse, .certificateInvalid, "the server's certificate does not name the host",
                transient: false, notSent: true, level: .error)
        default:
            make(
                .clientError, .invalidFormat, "the client's TLS configuration is not usable (\(error))",
                transient: false, notSent: true, level: .error)
        }
    }
}
