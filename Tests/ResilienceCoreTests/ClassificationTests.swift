import Foundation
import ResilienceCore
import Testing

@Suite("Classification vocabulary")
struct ClassificationTests {
    struct OtherError: Error {}

    struct AlwaysServerError: ErrorClassifier {
        func classify(_ error: any Error) -> FailureClassification? {
            FailureClassification(category: .serverError, code: .serverUnavailable)
        }
    }

    struct NeverRecognises: ErrorClassifier {
        func classify(_ error: any Error) -> FailureClassification? { nil }
    }

    @Test(
        "Cancellation is always cancelled, whatever the classifiers say",
        arguments: [
            CancellationError() as any Error, URLError(.cancelled),
            NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled), CancelledInURLDomain(),
        ])
    func cancellationWins(error: any Error) {
        let classifier = CompositeErrorClassifier([AlwaysServerError()])
        #expect(classifier.classification(of: error).category == .cancelled)
        #expect(ResilienceContext(key: "k", classifier: AlwaysServerError()).classify(error).category == .cancelled)
    }

    /// A Swift error that reports itself as `NSURLErrorCancelled` through `CustomNSError`.
    struct CancelledInURLDomain: CustomNSError {
        static var errorDomain: String { NSURLErrorDomain }
        var errorCode: Int { NSURLErrorCancelled }
    }

    /// A Swift error that is not cancellation, and one in the URL domain with another code.
    struct PlainFailure: Error {}
    struct TimedOutInURLDomain: CustomNSError {
        static var errorDomain: String { NSURLErrorDomain }
        var errorCode: Int { NSURLErrorTimedOut }
    }

    @Test(
        "Other errors, in the URL domain or not, are not cancellation",
        arguments: [
            PlainFailure() as any Error, TimedOutInURLDomain(), URLError(.timedOut),
            NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut), NSError(domain: "other", code: -999),
        ])
    func otherErrorsAreNotCancellation(error: any Error) {
        #expect(!CancellationDetection.isCancellation(error))
    }

    @Test("The first classifier that recognises the error wins; unknown errors get the fallback")
    func orderedComposite() {
        let composite = CompositeErrorClassifier([NeverRecognises(), AlwaysServerError()])
        #expect(composite.classification(of: OtherError()).category == .serverError)
        #expect(CompositeErrorClassifier([NeverRecognises()]).classification(of: OtherError()) == .unknown)
    }

    @Test("A composite in which nobody recognises the error returns nil, as the ErrorClassifier contract says")
    func compositeReturnsNilWhenNobodyKnows() {
        #expect(CompositeErrorClassifier([NeverRecognises()]).classify(OtherError()) == nil)
        #expect(CompositeErrorClassifier.standard.classify(OtherError()) == nil)
        let nested = CompositeErrorClassifier([CompositeErrorClassifier([NeverRecognises()]), AlwaysServerError()])
        #expect(nested.classify(OtherError())?.category == .serverError)
        #expect(CompositeErrorClassifier.standard.classify(CancellationError()) == .cancelled)
    }

    @Test("A ResilienceError classifies itself; circuit-open is never transient")
    func resilienceErrorClassifiesItself() {
        let open = ResilienceError(.circuitOpen, key: "jobs", retryAfter: .seconds(12))
        let classification = CompositeErrorClassifier([AlwaysServerError()]).classification(of: open)
        #expect(classification.category == .circuitOpen)
        #expect(classification.code == .circuitOpen)
        #expect(classification.retryAfter == .seconds(12))
        #expect(!classification.isTransient)
        #expect(classification.requestWasNotSent)
        #expect(ResilienceError(.attemptTimedOut).classification.category == .timeout)
        #expect(ResilienceError(.attemptTimedOut).classification.isTransient)
    }

    @Test("A ResilienceError's description names a wait only when there is one")
    func resilienceErrorDescription() {
        #expect(
            ResilienceError(.circuitOpen, key: "jobs", retryAfter: .seconds(12)).description
                == "circuit-open [jobs] (retry after 12.0 seconds)")
        // A budget's refusal that already waited out its delay carries a zero wait: nothing left to name.
        let refused = ResilienceError(
            .budgetExhausted, key: "jobs", retryAfter: .zero,
            underlying: FailureClassification(category: .serverError, code: .serverUnavailable))
        #expect(refused.description == "budget-exhausted [jobs] after server-error/NET_014")
        #expect(ResilienceError(.bulkheadFull).description == "bulkhead-full")
    }

    @Test(
        "A stage's error classified by a classifier equals its own classification, message included",
        arguments: [
            ResilienceError(.circuitOpen, key: "jobs", retryAfter: .seconds(12)),
            ResilienceError(.attemptTimedOut, key: "jobs"), ResilienceError(.deadlineExceeded),
            ResilienceError(.rateLimited, key: "jobs", retryAfter: .milliseconds(250)),
            ResilienceError(.bulkheadFull, key: "jobs"), ResilienceError(.throttled, key: "jobs"),
            ResilienceError(
                .budgetExhausted, key: "jobs",
                underlying: FailureClassification(category: .serverError, code: .http(503), httpStatus: 503)),
            ResilienceError(.fallbackExhausted, key: "jobs"), ResilienceError(.init(rawValue: "custom"), key: "jobs"),
        ])
    func classifiedStageErrorKeepsItsMessage(error: ResilienceError) {
        let own = error.classification
        let classified = ResilienceContext(key: "k", classifier: AlwaysServerError()).classify(error)
        #expect(classified == own)
        #expect(classified.hashValue == own.hashValue)
        #expect(classified.message == error.description)
        #expect(classified.description == own.description)
        var rewritten = classified
        rewritten.message = "replaced"
        #expect(rewritten.message == "replaced")
        #expect(rewritten != own)
    }

    /// An error that classifies itself and is larger than an existential's inline buffer.
    struct LargeClassifiedError: ClassifiedError {
        var classification: FailureClassification
        var detail = "a detail that keeps the error larger than three words"
        var attempts = (1, 2, 3, 4)
    }

    @Test("An error that classifies itself is classified by its own classification, whatever its size")
    func largeClassifiedError() {
        let own = FailureClassification(category: .rateLimited, code: .http(429), httpStatus: 429, message: "slow down")
        let error = LargeClassifiedError(classification: own)
        #expect(CompositeErrorClassifier([AlwaysServerError()]).classification(of: error) == own)
        #expect(ResilienceContext(key: "k", classifier: AlwaysServerError()).classify(error) == own)
        #expect(CompositeErrorClassifier.universalClassification(of: error)?.message == "slow down")
        #expect(CompositeErrorClassifier.universalClassification(of: OtherError()) == nil)
    }

    @Test("Transience defaults from the category")
    func transienceDefaults() {
        #expect(FailureClassification(category: .serverError, code: .http(503)).isTransient)
        #expect(!FailureClassification(category: .clientError, code: .http(400)).isTransient)
        #expect(FailureCode.http(503).rawValue == "HTTP_503")
    }

    @Test("Idempotency guard facts")
    func idempotency() {
        #expect(HTTPRequest(method: .get, url: URL(string: "https://x")!).idempotency.isSafeToRepeat)
        #expect(!HTTPRequest(method: .post, url: URL(string: "https://x")!).idempotency.isSafeToRepeat)
        #expect(Idempotency.keyed("k").isSafeToRepeat)
    }

    @Test("Headers are case-insensitive and keep repeated fields")
    func headers() {
        var headers: HTTPHeaders = ["Retry-After": "5", "Set-Cookie": "a=1"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers["retry-after"] == "5")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers.combinedValue(for: "set-cookie") == "a=1, b=2")
        headers["Retry-After"] = nil
        #expect(!headers.contains("retry-after"))
    }

    @Test("Header names fold ASCII case only where it is a letter, and other names as lowercased")
    func headerNameCaseFolding() {
        let headers: HTTPHeaders = ["X-Rate_Limit[1]": "a", "Ümlaut-Ä": "b", "e\u{301}tag": "c"]
        #expect(headers["x-rATE_lIMIT[1]"] == "a")
        // `{` is `[` + 0x20, as `r` is `R` + 0x20, but they are not two cases of one letter.
        #expect(headers["x-rate_limit{1]"] == nil)
        #expect(headers["ümlaut-ä"] == "b")
        #expect(headers["ÜMLAUT-Ä"] == "b")
        #expect(headers["E\u{301}TAG"] == "c")
        #expect(headers["ETag"] == nil)
    }

    @Test("Seeded generators repeat their sequence")
    func seededGenerator() {
        var first = PseudoRandomGenerator(seed: 42)
        var second = PseudoRandomGenerator(seed: 42)
        let a = (0..<5).map { _ in first.next() }
        let b = (0..<5).map { _ in second.next() }
        #expect(a == b)
        #expect(Set(a).count == 5)
    }
}
