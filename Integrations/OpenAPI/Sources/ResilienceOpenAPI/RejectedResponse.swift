import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A response whose status the middleware treats as a failure (a 503 with `Retry-After`, a 429 …), thrown
/// inside the pipeline so its stages see it classified; returned to the client (or thrown) when the pipeline
/// gives up.
public struct RejectedResponse: ClassifiedError, Sendable, CustomStringConvertible {
    /// The response head.
    public var response: HTTPTypes.HTTPResponse
    /// The body, cut at ``ResilienceMiddlewareConfiguration/maximumRetainedFailureBody``.
    public var body: [UInt8]
    /// The status error the classifier read (status, headers, body).
    public var statusError: HTTPStatusError
    /// The classification, with the server's retry hint and message.
    public var classification: FailureClassification
    /// False when the transport returned no body at all (not an empty one), so the client gets none either.
    var hasBody = true

    /// Creates the error, classifying the response with `classifier`.
    /// - Parameters:
    ///   - response: The response head.
    ///   - body: The retained body bytes.
    ///   - url: The request's URL, if known.
    ///   - classifier: Classifies the status (adds `Retry-After` and the server's message).
    public init(
        response: HTTPTypes.HTTPResponse, body: [UInt8], url: URL?, classifier: HTTPStatusClassifier = .init()
    ) {
        self.response = response
        self.body = body
        var headers = ResilienceCore.HTTPHeaders()
        for field in response.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        let statusError = HTTPStatusError(
            response: ResilienceCore.HTTPResponse(
                status: response.status.code, headers: headers, body: Data(body), url: url))
        self.statusError = statusError
        self.classification =
            classifier.classify(statusError)
            ?? FailureClassification(
                category: .serverError, code: .serverUnavailable, httpStatus: response.status.code)
    }

    /// The response head and body handed to the client when the pipeline gives up on this response.
    var returned: (HTTPTypes.HTTPResponse, HTTPBody?) { (response, hasBody ? HTTPBody(body) : nil) }

    /// `HTTP 503 (server-error/NET_014)`.
    public var description: String { "HTTP \(response.status.code) (\(classification))" }
}

/// The failure of a call whose request body could not be sent again: the original failure, made final.
public struct NotReplayable: ClassifiedError, CustomStringConvertible {
    /// What went wrong on the only attempt.
    public var failure: any Error
    /// The failure's classification, not transient.
    public var classification: FailureClassification

    init(failure: any Error, classification: FailureClassification, note: String) {
        self.failure = failure
        var classification = classification
        classification.isTransient = false
        classification.message = [classification.message, note].compactMap { $0 }.joined(separator: "; ")
        self.classification = classification
    }

    /// The failure and why it was not retried.
    public var description: String { "\(failure) (\(classification))" }
}
