import AsyncHTTPClient
import NIOCore
import NIOHTTP1
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

/// Classifies the errors AsyncHTTPClient and SwiftNIO throw (`HTTPClientError`, connection, socket, HTTP
/// parser, TLS and decompression errors) into ResilienceKit's stable codes, the same ones
/// `URLErrorClassifier` gives for URLSession.
///
/// ``AsyncHTTPClientTransport`` already throws classified `TransportError`s; use this classifier where
/// AsyncHTTPClient errors reach a pipeline some other way (your own `HTTPClient` calls, an OpenAPI client over
/// AsyncHTTPClient):
///
/// ```swift
/// let classifier = CompositeErrorClassifier([TransportErrorClassifier.standard, AsyncHTTPClientErrorClassifier()])
/// ```
public struct AsyncHTTPClientErrorClassifier: ErrorClassifier {
    /// Creates the classifier.
    public init() {}

    /// The classification of an AsyncHTTPClient or SwiftNIO error, or nil for other errors.
    public func classify(_ error: any Error) -> FailureClassification? {
        switch error {
        case let error as HTTPClientError: Self.classification(of: error)
        case let error as NIOConnectionError: Self.classification(of: error)
        case let error as IOError: Self.classification(errno: error.errnoCode, message: "\(error)")
        case let error as ChannelError: Self.classification(of: error)
        case let error as HTTPParserError: Self.classification(of: error)
        case let error as NIOHTTPDecompression.DecompressionError: Self.classification(of: error)
        case let error as NIOHTTPDecompression.ExtraDecompressionError:
            error == .truncatedData
                ? Self.make(.transient, .truncatedResponse, "compressed body ended early")
                : Self.make(.invalidResponse, .invalidResponse, "data after the compressed body", transient: false)
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            Self.make(.invalidResponse, .certificateInvalid, "TLS failure: \(error)", transient: false, level: .error)
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

    /// `HTTPClientError` by its (opaque) code.
    static func classification(of error: HTTPClientError) -> FailureClassification {
        let message = error.description
        switch error {
        case .cancelled, .requestStreamCancelled:
            return .cancelled
        case .readTimeout, .writeTimeout, .deadlineExceeded:
            return make(.timeout, .timedOut, message)
        case .connectTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout,
            .getConnectionFromPoolTimeout:
            // No byte of the request was written: the connection (or a pool slot) never became available.
            return make(.timeout, .timedOut, message, notSent: true)
        case .remoteConnectionClosed, .uncleanShutdown:
            return make(.transient, .connectionReset, message)
        case .redirectLimitReached, .redirectCycleDetected:
            return make(.invalidResponse, .tooManyRedirects, message, transient: false)
        case .invalidProxyResponse:
            return make(.invalidResponse, .invalidResponse, message, transient: false)
        case .proxyAuthenticationRequired:
            return make(.authentication, .unauthorized, message, transient: false, notSent: true)
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath, .traceRequestWithBody, .bodyLengthMismatch,
            .contentLengthMissing, .writeAfterRequestSent, .identityCodingIncorrectlyPresent:
            return make(.clientError, .invalidFormat, message, transient: false, notSent: true)
        case .alreadyShutdown:
            return make(.unknown, .unknown, message, transient: false, notSent: true, level: .error)
        default:
            // Codes with associated values compare by description.
            if message.hasPrefix("HTTPClientError.unsupportedScheme")
                || message.hasPrefix("HTTPClientError.invalidHeaderField")
            {
                return make(.clientError, .invalidFormat, message, transient: false, notSent: true)
            }
            if message.hasPrefix("HTTPClientError.serverOfferedUnsupportedApplicationProtocol") {
                return make(.invalidResponse, .certificateInvalid, message, transient: false, level: .error)
            }
            return make(.unknown, .unknown, message, transient: false, level: .error)
        }
    }

    /// A failed connection attempt (DNS, then every address tried): nothing was sent.
    static func classification(of error: NIOConnectionError) -> FailureClassification {
        if let first = error.connectionErrors.first?.error {
            var classification = classify(underlying: first)
            classification.requestWasNotSent = true
            return classification
        }
        return make(
            .networkUnreachable, .hostNotFound, "could not resolve \(error.host)", notSent: true)
    }

    private static func classify(underlying error: any Error) -> FailureClassification {
        switch error {
        case let error as IOError: classification(errno: error.errnoCode, message: "\(error)")
        case let error as ChannelError: classification(of: error)
        default: make(.transient, .connectionRefused, "\(error)", notSent: true)
        }
    }

    /// A socket error by its `errno`.
    static func classification(errno code: Int32, message: String) -> FailureClassification {
        switch code {
        case ECONNREFUSED:
            return make(.transient, .connectionRefused, message, notSent: true)
        case ECONNRESET, EPIPE, ECONNABORTED:
            return make(.transient, .connectionReset, message)
        case ETIMEDOUT:
            return make(.timeout, .timedOut, message)
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EADDRNOTAVAIL:
            return make(.networkUnreachable, .noConnection, message, notSent: true)
        default:
            return make(.transient, .connectionReset, message)
        }
    }

    static func classification(of error: ChannelError) -> FailureClassification {
        let message = "\(error)"
        switch error {
        case .connectTimeout:
            return make(.timeout, .timedOut, message, notSent: true)
        case .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed, .eof:
            return make(.transient, .connectionReset, message)
        case .writeHostUnreachable:
            return make(.networkUnreachable, .noConnection, message, notSent: true)
        default:
            return make(.unknown, .unknown, message, transient: false, level: .error)
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
}
