import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's delegate for ``URLSessionTransport``: streams each body under the size cap, polices
/// redirects, and completes each task's continuation exactly once.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// How a task ended: with the response, or with a redirect hop for the transport to send itself (its request
    /// and the chain's rules so far).
    enum Outcome: Sendable {
        case response(HTTPResponse)
        case redirect(HTTPRequest, RedirectPolicy)
    }

    struct Exchange {
        var continuation: CheckedContinuation<Outcome, any Error>
        var originalURL: URL
        /// The request of the current hop: the one sent, then each redirect's (``RedirectPolicy/nextRequest``).
        var current: HTTPRequest
        var response: HTTPURLResponse?
        var body = Data()
        var redirects: RedirectPolicy
        var failure: TransportError?
        /// A hop whose request keeps a body: the transport sends it in a task of its own, since FoundationNetworking
        /// would send it without the body.
        var hop: HTTPRequest?
    }

    let configuration: URLSessionTransportConfiguration
    private let exchanges = LockedState<[Int: Exchange]>(initialState: [:])

    init(configuration: URLSessionTransportConfiguration) {
        self.configuration = configuration
    }

    /// Starts tracking a task sending `request`: its continuation, and the rules of the redirect chain so far,
    /// which decide its hops.
    func register(
        _ taskIdentifier: Int, request: HTTPRequest, redirects: RedirectPolicy,
        continuation: CheckedContinuation<Outcome, any Error>
    ) {
        exchanges.withLock {
            $0[taskIdentifier] = Exchange(
                continuation: continuation, originalURL: request.url, current: request, redirects: redirects)
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

    /// Decides the hop with the exchange's ``RedirectPolicy`` and sends the request ``RedirectPolicy/nextRequest``
    /// builds (method, body, content fields and credentials as the AsyncHTTPClient transport sends them), not the
    /// one FoundationNetworking proposes: that one keeps a 303's content fields and sends a 307 or 308 without
    /// its body. A hop that keeps a body ends the task instead, for the transport to send it in a new one.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let target = request.url else {
            completionHandler(nil)
            return
        }
        let configuration = configuration
        let status = response.statusCode
        let decision = exchanges.withLock { exchanges -> Result<HTTPRequest?, TransportError> in
            guard var exchange = exchanges[task.taskIdentifier] else { return .failure(.redirectLoop(url: target)) }
            defer { exchanges[task.taskIdentifier] = exchange }
            let method = RedirectPolicy.nextMethod(after: exchange.current.method, status: status)
            switch exchange.redirects.evaluate(
                from: response.url ?? exchange.current.url, to: target, method: method)
            {
            case .refuse(let failure):
                exchange.failure = failure
                return .failure(failure)
            case .follow(let url, let stripCredentials):
                let next = RedirectPolicy.nextRequest(
                    after: exchange.current, status: status, target: url, stripCredentials: stripCredentials,
                    credentialHeaders: configuration.credentialHeaders.union(
                        exchange.redirects.attachedCredentialHeaders))
                if let body = next.body, !body.isEmpty {
                    exchange.hop = next
                    return .success(nil)
                }
                exchange.current = next
                return .success(next)
            }
        }
        switch decision {
        case .success(let next?):
            completionHandler(URLSessionTransport.urlRequest(for: next, configuration: configuration))
        case .success(nil), .failure:
            completionHandler(nil)
            Self.cancelLater(task)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let url = exchange.response?.url ?? exchange.originalURL
        if let hop = exchange.hop {
            exchange.continuation.resume(returning: .redirect(hop, exchange.redirects))
            return
        }
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
            returning: .response(
                HTTPResponse(status: http.statusCode, headers: headers, body: exchange.body, url: http.url)))
    }

    /// Cancels `task` from another thread: callbacks run on FoundationNetworking's own queue (see
    /// ``InlineDelegateQueue``), where `cancel()` would wait for itself.
    static func cancelLater(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }

    /// Platform error → cancellation or ``TransportError`` via our own table, using what we saw on the wire: a
    /// short body is truncated, and a failure once the chain has followed a redirect is never marked
    /// ``FailureClassification/requestWasNotSent``, since the request it started from was sent and answered.
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
        var classification = URLErrorClassifier.classification(
            code: nsError.code, message: URLErrorClassifier.message(of: nsError))
        // A redirect hop fails after the server answered the request with the redirect (a POST's 303 among them,
        // whose POST the server has already applied): a hop that never connected does not make it unsent.
        if exchange.redirects.redirects > 0 { classification.requestWasNotSent = false }
        return TransportError(classification, url: url, platformErrorCode: nsError.code)
    }
}
