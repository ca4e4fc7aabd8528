import Foundation
import ResilienceCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal `HTTPTransport` over `URLSession` for the sync examples (ResilienceTransport's
/// `URLSessionTransport` is the production one): honours the context's deadline with its own clock and
/// cancels the task when the caller is cancelled.
public final class URLSessionLoopbackTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport with an ephemeral session.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    /// Sends `request`; throws a classified network error when no response arrives.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpBody = request.body
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if let remaining = context.remaining(now: context.clock.now()) {
            let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) * 1e-18
            urlRequest.timeoutInterval = max(0.05, seconds)
        }
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: LoopbackNetworkError(underlying: error))
                    } else if let http = response as? HTTPURLResponse {
                        var headers = HTTPHeaders()
                        for (name, value) in http.allHeaderFields {
                            headers.add(name: "\(name)", value: "\(value)")
                        }
                        continuation.resume(
                            returning: HTTPResponse(
                                status: http.statusCode, headers: headers, body: data ?? Data(), url: http.url))
                    } else {
                        continuation.resume(throwing: LoopbackNetworkError(underlying: URLError(.badServerResponse)))
                    }
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Holds the data task so a cancellation arriving from another thread can cancel it.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func set(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelNow = cancelled
        lock.unlock()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

/// A URL loading failure, classified the way the sync engine needs it.
public struct LoopbackNetworkError: ClassifiedError, CustomStringConvertible {
    /// The URL loading system's error.
    public var underlying: any Error

    /// Refused connections mean offline (nothing was sent); cancellations are cancellations; timeouts are
    /// timeouts; everything else is a transient network failure.
    public var classification: FailureClassification {
        let code = (underlying as? URLError)?.code
        switch code {
        case .cancelled?:
            return .cancelled
        case .timedOut?:
            return FailureClassification(category: .timeout, code: .timedOut, message: description)
        case .cannotConnectToHost?, .notConnectedToInternet?, .cannotFindHost?:
            return FailureClassification(
                category: .networkUnreachable, code: .connectionRefused, message: description,
                requestWasNotSent: true)
        default:
            return FailureClassification(category: .transient, code: .connectionReset, message: description)
        }
    }

    /// The underlying error's description.
    public var description: String { "\(underlying)" }
}
