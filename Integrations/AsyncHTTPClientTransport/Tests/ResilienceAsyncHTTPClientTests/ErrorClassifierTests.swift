import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOSSL
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The classification table for AsyncHTTPClient and SwiftNIO errors, without a network.
@Suite("AsyncHTTPClient error classification")
struct ErrorClassifierTests {
    let classifier = AsyncHTTPClientErrorClassifier()

    @Test(
        "HTTPClientError codes map to stable codes; connection-phase timeouts prove nothing was sent",
        arguments: [
            (HTTPClientError.readTimeout, FailureCode.timedOut, false),
            (.writeTimeout, .timedOut, false),
            (.deadlineExceeded, .timedOut, false),
            (.connectTimeout, .timedOut, true),
            (.tlsHandshakeTimeout, .timedOut, true),
            (.getConnectionFromPoolTimeout, .timedOut, true),
            (.remoteConnectionClosed, .connectionReset, false),
            (.redirectLimitReached, .tooManyRedirects, false),
            (.invalidURL, .invalidFormat, true),
            (.emptyHost, .invalidFormat, true),
            (.uncleanShutdown, .truncatedResponse, false),
            (.cancelled, .cancelled, false),
        ])
    func clientErrors(error: HTTPClientError, code: FailureCode, notSent: Bool) {
        let classification = classifier.classify(error)
        #expect(classification?.code == code, "\(error)")
        #expect(classification?.requestWasNotSent == notSent, "\(error)")
    }

    @Test("Invalid header names and values are the caller's invalid request, never sent, with no value in the message")
    func invalidHeaderFields() {
        for error in [
            HTTPClientError.invalidHeaderFieldValues(["secret\r\nX-Injected: yes"]),
            .invalidHeaderFieldNames(["X secret"]),
        ] {
            let classification = classifier.classify(error)
            #expect(classification?.category == .clientError, "\(error)")
            #expect(classification?.code == .invalidFormat, "\(error)")
            #expect(classification?.isTransient == false, "\(error)")
            #expect(classification?.requestWasNotSent == true, "\(error)")
            #expect(classification?.message?.contains("secret") == false, "\(error)")
        }
    }

    @Test("Timeouts and resets are transient; TLS, redirects and malformed replies are not")
    func transience() {
        #expect(classifier.classify(HTTPClientError.readTimeout)?.isTransient == true)
        #expect(classifier.classify(HTTPClientError.remoteConnectionClosed)?.isTransient == true)
        #expect(classifier.classify(HTTPClientError.redirectCycleDetected)?.isTransient == false)
        #expect(classifier.classify(HTTPParserError.invalidStatus)?.isTransient == false)
    }

    @Test("Socket, channel, parser and decompression errors")
    func nioErrors() {
        #expect(classifier.classify(IOError(errnoCode: ECONNREFUSED, reason: "connect"))?.code == .connectionRefused)
        #expect(classifier.classify(IOError(errnoCode: ECONNRESET, reason: "read"))?.code == .connectionReset)
        #expect(classifier.classify(IOError(errnoCode: ENETUNREACH, reason: "connect"))?.code == .noConnection)
        #expect(classifier.classify(ChannelError.connectTimeout(.seconds(1)))?.requestWasNotSent == true)
        #expect(classifier.classify(ChannelError.eof)?.code == .connectionReset)
        #expect(classifier.classify(HTTPParserError.invalidEOFState)?.code == .truncatedResponse)
        #expect(classifier.classify(HTTPParserError.invalidStatus)?.code == .invalidResponse)
        #expect(classifier.classify(NIOHTTPDecompression.DecompressionError.limit)?.code == .responseTooLarge)
        #expect(
            classifier.classify(NIOHTTPDecompression.DecompressionError.inflationError(-3))?.code == .invalidResponse)
        #expect(classifier.classify(CancellationError()) == nil, "not an AsyncHTTPClient error")
    }

    @Test("A host whose IPv6 address is unreachable and IPv4 address refuses is refused, not an unreachable network")
    func connectionFailuresAcrossAddresses() {
        let unreachable = IOError(errnoCode: ENETUNREACH, reason: "connect")
        let refused = IOError(errnoCode: ECONNREFUSED, reason: "connect")
        let timedOut = ChannelError.connectTimeout(.seconds(1))
        let classify = AsyncHTTPClientErrorClassifier.classification(ofConnectionFailures:host:port:)
        // Happy eyeballs tries IPv6 first; a host without an IPv6 route fails there at once, then IPv4 answers.
        let mixed = classify([unreachable, refused], "api.example.com", 443)
        #expect(mixed.code == .connectionRefused, "\(mixed)")
        #expect(mixed.category == .transient)
        #expect(mixed.requestWasNotSent)
        #expect(mixed.message == "connection refused (ECONNREFUSED) to api.example.com:443")
        #expect(classify([unreachable, timedOut], "api.example.com", 443).code == .timedOut)
        #expect(classify([refused, timedOut], "api.example.com", 443).code == .connectionRefused)
        // Only when every address is unreachable is the network.
        let offline = classify([unreachable, IOError(errnoCode: EHOSTUNREACH, reason: "connect")], "a.example", 80)
        #expect(offline.code == .noConnection)
        #expect(offline.category == .networkUnreachable)
        #expect(classify([], "nowhere.example", 80).code == .hostNotFound)
    }

    @Test("Messages say what the code says: a refused connection says refused, a reset says reset")
    func messagesAgreeWithCodes() {
        let refused = classifier.classify(IOError(errnoCode: ECONNREFUSED, reason: "connect"))
        #expect(refused?.message?.contains("refused") == true, "\(String(describing: refused))")
        #expect(refused?.message?.contains("reset") == false)
        let reset = classifier.classify(IOError(errnoCode: ECONNRESET, reason: "read"))
        #expect(reset?.message?.contains("reset") == true)
    }

    @Test("TLS errors by value: a missing close_notify is a transient truncation, a failed handshake is not transient")
    func tlsErrors() {
        let unclean = classifier.classify(NIOSSLError.uncleanShutdown)
        #expect(unclean?.code == .truncatedResponse)
        #expect(unclean?.isTransient == true)
        let handshake = classifier.classify(NIOSSLError.handshakeFailed(.sslError([])))
        #expect(handshake?.code == .certificateInvalid)
        #expect(handshake?.isTransient == false)
        #expect(classifier.classify(NIOSSLError.failedToLoadCertificate)?.category == .clientError)
        #expect(classifier.classify(NIOSSLExtraError.failedToValidateHostname)?.code == .certificateInvalid)
    }

    @Test("HTTP/2 errors by value: a refused stream was not sent, a reset one was; protocol violations are invalid")
    func http2Errors() {
        let refused = classifier.classify(
            NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(1), errorCode: .refusedStream))
        #expect(refused?.isTransient == true)
        #expect(refused?.requestWasNotSent == true)
        let reset = classifier.classify(
            NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(1), errorCode: .internalError))
        #expect(reset?.isTransient == true)
        #expect(reset?.requestWasNotSent == false)
        let droppedByGoAway = classifier.classify(
            NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(5), errorCode: .cancel))
        #expect(droppedByGoAway?.isTransient == true)
        #expect(droppedByGoAway?.requestWasNotSent == false, "CANCEL is also a server's reset: not proof of not sent")
        let wrapped = classifier.classify(
            NIOHTTP2Errors.streamError(
                streamID: HTTP2StreamID(3),
                baseError: NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(3), errorCode: .refusedStream)))
        #expect(wrapped?.requestWasNotSent == true)
        #expect(classifier.classify(NIOHTTP2Errors.ioOnClosedConnection())?.isTransient == true)
        #expect(classifier.classify(NIOHTTP2Errors.flowControlViolation())?.code == .invalidResponse)
        #expect(classifier.classify(NIOHTTP2Errors.flowControlViolation())?.isTransient == false)
    }
}
