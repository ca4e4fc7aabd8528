/// Runs each request through a ``ResiliencePipeline`` chosen per host, validating the status inside the
/// pipeline so its retry stage sees rejected responses as ``HTTPStatusError``.
///
/// Every response's advertised quota (`RateLimit`, `RateLimit-Remaining`, `X-RateLimit-*`) is reported to the
/// attempt's ``ResilienceContext/quotaObserver`` (the pipeline's server-quota stage) whatever the wrapped
/// transport does, so pacing by the server's quota works over any ``HTTPTransport``; reporting the same
/// response twice (``TransportExchange`` reports it too) changes nothing.
///
/// It sets the context's ``ResilienceContext/idempotency`` from the request (so an idempotency guard can
/// tell a keyed POST from a bare one) and classifies failures with the context's classifier first (the
/// application's configured rules), then ``classifier`` for what the context's does not recognise. The pipeline
/// closure is called per request: return long-lived instances (a breaker must keep its state), for example
/// from a registry keyed by host.
///
/// ```swift
/// let transport = IdempotencyKeyTransport(wrapping: ResilientTransport(
///     wrapping: URLSessionTransport(), pipeline: { host in registry.pipeline(for: host) }))
/// ```
public struct ResilientTransport: HTTPTransport {
    /// The wrapped transport (one attempt).
    public let base: any HTTPTransport
    /// The statuses accepted as success.
    public let validation: ResponseValidation
    /// Classifies transport and status failures for the pipeline's stages.
    public let classifier: any ErrorClassifier
    private let pipeline: @Sendable (String) -> any ResiliencePipeline
    /// The one pipeline every request runs through, when it was given instead of a per-host lookup: `send`
    /// then skips working out the request's host.
    private let onlyPipeline: (any ResiliencePipeline)?
    /// ``classifier`` behind the universal rules: what a context with the default classifier (a composite that
    /// lists none) gets, built once instead of on every send.
    private let classifierAfterDefault: any ErrorClassifier

    /// Wraps `base`; `pipeline` maps a host (empty when the URL has none) to its pipeline.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport (one attempt).
    ///   - validation: The statuses accepted as success. Default: `.successful`.
    ///   - classifier: Classifies transport and status failures for the pipeline's stages. Default:
    ///     `TransportErrorClassifier.standard`.
    ///   - pipeline: Maps a request's host (empty when the URL has none) to the pipeline its sends run through; called
    ///     on every send, so return a stored pipeline, not a new one.
    public init(
        wrapping base: any HTTPTransport, validation: ResponseValidation = .successful,
        classifier: any ErrorClassifier = TransportErrorClassifier.standard,
        pipeline: @escaping @Sendable (String) -> any ResiliencePipeline
    ) {
        self.base = base
        self.validation = validation
        self.classifier = classifier
        self.pipeline = pipeline
        onlyPipeline = nil
        classifierAfterDefault = CompositeErrorClassifier([classifier])
    }

    /// Wraps `base`; every request runs through `pipeline`, whatever its host.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport (one attempt).
    ///   - validation: The statuses accepted as success. Default: `.successful`.
    ///   - classifier: Classifies transport and status failures for the pipeline's stages. Default:
    ///     `TransportErrorClassifier.standard`.
    ///   - pipeline: The pipeline every send runs through (a long-lived instance: a breaker must keep its state).
    public init(
        wrapping base: any HTTPTransport, validation: ResponseValidation = .successful,
        classifier: any ErrorClassifier = TransportErrorClassifier.standard, pipeline: any ResiliencePipeline
    ) {
        self.base = base
        self.validation = validation
        self.classifier = classifier
        self.pipeline = { _ in pipeline }
        onlyPipeline = pipeline
        classifierAfterDefault = CompositeErrorClassifier([classifier])
    }

    /// Sends `request` through the host's pipeline; throws ``HTTPStatusError`` for a status not accepted.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        var context = context
        context.idempotency = request.idempotency
        if let composite = context.classifier as? CompositeErrorClassifier, composite.classifiers.isEmpty {
            // The default: it recognises only what the universal rules do, which every composite applies first.
            context.classifier = classifierAfterDefault
        } else {
            context.classifier = CompositeErrorClassifier([context.classifier, classifier])
        }
        let base = base
        let validation = validation
        let pipeline = onlyPipeline ?? self.pipeline(request.url.host ?? "")
        return try await pipeline.execute(context) { attempt in
            let response = try await base.send(request, context: attempt)
            attempt.reportQuota(from: response.headers, responseDate: response.headers["Date"].flatMap(HTTPDate.parse))
            guard validation.accepts(response.status) else {
                throw HTTPStatusError(response: response, request: request)
            }
            return response
        }
    }
}
