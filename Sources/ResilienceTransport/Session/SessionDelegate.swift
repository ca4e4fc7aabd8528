import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's delegate for ``URLSessionTransport``: streams each body under the size cap, polices
/// redirects, and completes each task's continuation exactly once.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    struct Exchange {
        var continuation: CheckedContinuation<HTTPResponse, any Error>
        var originalURL: URL
        var response: HTTPURLResponse?
        var body = Data()
        var redirects: RedirectPolicy
        var failure: TransportError?
    }

    let configuration: URLSessionTransportConfiguration
    private let exchanges = LockedState<[Int: Exchange]>(initialState: [:])

    init(configuration: URLSessionTransportConfiguration) {
        self.configuration = configuration
    }

    /// Starts tracking a task: its continuation, and the redirect rules its hops are decided by (held to
    /// `secureTransport`, the plaintext policies in effect where the request was sent).
    func register(
        _ taskIdentifier: Int, url: URL, method: HTTPMethod, secureTransport: [SecureTransportPolicy],
        continuation: CheckedContinuation<HTTPResponse, any Error>
    ) {
        exchanges.withLock {
            $0[taskIdentifier] = Exchange(
                continuation: continuation, originalURL: url,
                redirects: RedirectPolicy(
                    originalURL: url, method: method, maximumRedirects: configuration.maximumRedirects,
                    allowsDowngrade: configuration.allowsRedirectDowngrade, secureTransport: secureTransport))
        }
    }

    /// Completes the task's continuation with `error` unless it already completed.
    func abandon(_ taskIdentifier: Int, with error: any Error) {
        exchanges.withLock { $0.removeValue(forKey: taskIdentifier) }?.continuation.resume(throwing: error)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let limit = configuration.maximumResponseSize
        let declared = response.expectedContentLength
        let http = response as? HTTPURLResponse
        exchanges.withLock { $0[dataTask.taskIdentifier]?.response = http }
        let encoded = http?.value(forHTTPHeaderField: "Content-Encoding").map { !$0.isEmpty } ?? false
        let method = HTTPMethod(rawValue: dataTask.currentRequest?.httpMethod ?? "GET")
        let hasBody = TransportExchange.responseHasBody(status: http?.statusCode ?? 200, method: method)
        if declared > Int64(limit) && !encoded && hasBody {
            exchanges.withLock {
                $0[dataTask.taskIdentifier]?.failure = .responseTooLarge(limit: limit, url: response.url)
            }
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let limit = configuration.maximumResponseSize
        let overLimit = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[dataTask.taskIdentifier], exchange.failure == nil else { return false }
            if exchange.body.count + data.count > limit {
                exchange.body = Data()
                exchange.failure = .responseTooLarge(limit: limit, url: exchange.response?.url ?? exchange.originalURL)
                exchanges[dataTask.taskIdentifier] = exchange
                return true
            }
            exchanges[dataTask.taskIdentifier] = nil
            exchange.body.append(data)
            exchanges[dataTask.taskIdentifier] = exchange
            return false
        }
        if overLimit { Self.cancelLater(dataTask) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let target = request.url else {
            completionHandler(nil)
            return
        }
        let configuration = configuration
        let verdict = exchanges.withLock { exchanges -> RedirectPolicy.Verdict in
            guard var exchange = exchanges[task.taskIdentifier] else { return .refuse(.redirectLoop(url: target)) }
            defer { exchanges[task.taskIdentifier] = exchange }
            return exchange.redirects.evaluate(
                from: response.url ?? exchange.originalURL, to: target,
                method: HTTPMethod(rawValue: request.httpMethod ?? "GET"))
        }
        switch verdict {
        case .refuse(let failure):
            exchanges.withLock { $0[task.taskIdentifier]?.failure = failure }
            completionHandler(nil)
            Self.cancelLater(task)
        case .follow(let url, let stripCredentials):
            var next = request
            next.url = url
            if stripCredentials {
                for name in request.allHTTPHeaderFields?.keys.map({ $0 }) ?? []
                where RedirectPolicy.isCredentialHeader(name, in: configuration.credentialHeaders) {
                    next.setValue(nil, forHTTPHeaderField: name)
                }
            }
            completionHandler(next)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let url = exchange.response?.url ?? exchange.originalURL
        if let failure = exchange.failure {
            exchange.continuation.resume(throwing: failure)
            return
        }
        if let error {
            exchange.continuation.resume(throwing: Self.translate(error, exchange: exchange, url: url))
            return
        }
        guard let http = exchange.response else {
            exchange.continuation.resume(
                throwing: TransportError(
                    FailureClassification(
                        category: .invalidResponse, code: .invalidResponse, isTransient: false,
                        message: "no HTTP response"), url: url))
            return
        }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            headers.add(name: "\(name)", value: "\(value)")
        }
        exchange.continuation.resume(
            returning: HTTPResponse(status: http.statusCode, headers: headers, body: exchange.body, url: http.url))
    }

    /// Cancels `task` from another thread: callbacks run on FoundationNetworking's own queue (see
    /// ``InlineDelegateQueue``), where `cancel()` would wait for itself.
    static func cancelLater(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }

    /// Platform error → cancellation or ``TransportError`` via our own table, using what we saw on the wire.
    static func translate(_ error: any Error, exchange: Exchange, url: URL) -> any Error {
        if CancellationDetection.isCancellation(error) { return CancellationError() }
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else { return error }
        let declared = exchange.response?.expectedContentLength ?? -1
        let encoded = exchange.response?.value(forHTTPHeaderField: "Content-Encoding").map { !$0.isEmpty } ?? false
        if exchange.response != nil, declared > 0, !encoded, exchange.body.count < Int(declared),
            nsError.code != URLError.Code.timedOut.rawValue
        {
            return TransportError.truncated(
                received: exchange.body.count, expected: Int(declared), url: url, platformErrorCode: nsError.code)
        }
        let classification = URLErrorClassifier.classification(
            code: nsError.code, message: URLErrorClassifier.message(of: nsError))
        return TransportError(classification, url: url, platformErrorCode: nsError.code)
    }
}
