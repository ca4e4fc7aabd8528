import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import ResilienceAsyncHTTPClient
import ResilienceTransport
import Testing

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
            (.unsupportedScheme("ftp"), .invalidFormat, true),
            (.cancelled, .cancelled, false),
        ])
    func clientErrors(error: HTTPClientError, code: FailureCode, notSent: Bool) {
        let classification = classifier.classify(error)
        #expect(classification?.code == code, "\(error)")
        #expect(classification?.requestWasNotSent == notSent, "\(error)")
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
}
