import ResilienceCore

/// A conformance kit for ``ErrorPresenter`` implementations.
///
/// It presents every standard failure category alone and in multi-source contexts (partial results, all
/// sources failed) and checks the presenter contract: a title and a message are always there; no raw error
/// text, URL or credential leaks into them (those belong in `technicalDetails`); the failure's code is kept;
/// a multi-source partial result says how many sources answered; and
/// presenting is pure (the same input gives the same output).
///
/// ```swift
/// @Test func conforms() async throws {
///     try await ErrorPresenterConformance(MyPresenter()).check()
/// }
/// ```
public struct ErrorPresenterConformance: ConformanceKit {
    /// The presenter under test.
    public var presenter: any ErrorPresenter
    /// The categories presented (every standard one by default).
    public var categories: [FailureCategory]

    /// Every standard failure category.
    public static let standardCategories: [FailureCategory] = [
        .transient, .timeout, .rateLimited, .serverError, .clientError, .notFound, .authentication,
        .networkUnreachable, .insecureTransport, .invalidResponse, .conflict, .cancelled, .circuitOpen, .throttled,
        .storage, .unknown,
    ]

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - presenter: The presenter under test.
    ///   - categories: The categories presented; every standard one by default.
    public init(_ presenter: any ErrorPresenter, categories: [FailureCategory] = Self.standardCategories) {
        self.presenter = presenter
        self.categories = categories
    }

    /// `"ErrorPresenter"`.
    public var subject: String { "ErrorPresenter" }

    static let secret = "s3cr3t-presenter-token"
    static let rawText =
        "Error Domain=NSURLErrorDomain Code=-1004 https://user:\(secret)@api.example.com/v1?api_key=\(secret)"

    private func failure(_ category: FailureCategory) -> FailureClassification {
        FailureClassification(
            category: category, code: FailureCode("CONF_\(category.rawValue.uppercased())"), httpStatus: 503,
            retryAfter: category == .rateLimited ? .seconds(30) : nil, message: Self.rawText)
    }

    private var contexts: [(name: String, context: PresentationContext)] {
        [
            ("single", PresentationContext()),
            (
                "partial",
                PresentationContext(
                    itemNoun: "jobs",
                    sources: [
                        .init(id: "a", displayName: "Alpha"), .init(id: "b", displayName: "Beta"),
                        .init(id: "c", displayName: "Gamma", failure: failure(.timeout)),
                    ], itemsShown: 12)
            ),
            (
                "all-failed",
                PresentationContext(
                    itemNoun: "jobs",
                    sources: [
                        .init(id: "a", displayName: "Alpha", failure: failure(.serverError)),
                        .init(id: "b", displayName: "Beta", failure: failure(.timeout)),
                    ])
            ),
        ]
    }

    /// Runs every case.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.run("title-and-message") {
            each { name, category, shown in
                shown.title.isEmpty || shown.message.isEmpty ? "\(category) (\(name)): an empty title or message" : nil
            }
        }
        await run.run("no-raw-text-or-secrets") {
            each { name, category, shown in
                let visible = [shown.title, shown.message, shown.suggestedAction ?? ""].joined(separator: " ")
                if visible.contains(Self.secret) { return "\(category) (\(name)): a credential is shown to the user" }
                if visible.contains("://") || visible.contains("NSURLErrorDomain") {
                    return "\(category) (\(name)): raw error text or a URL is shown to the user"
                }
                return nil
            }
        }
        await run.run("keeps-the-code") {
            each { name, category, shown in
                name == "single" && shown.code != failure(category).code
                    ? "\(category): code \(shown.code), expected \(failure(category).code)" : nil
            }
        }
        await run.check("partial-results-say-how-many") {
            let partial = contexts[1].context
            let shown = presenter.present(failure(.timeout), context: partial)
            let visible = shown.title + " " + shown.message
            let succeeded = String(partial.sourcesSucceeded)
            let attempted = String(partial.sourcesAttempted)
            return visible.contains(succeeded) && visible.contains(attempted)
                ? nil : "a partial result (\(succeeded) of \(attempted) sources) does not say so: \(visible)"
        }
        await run.run("pure") {
            each { name, category, shown in
                let again = presenter.present(failure(category), context: context(named: name))
                return again == shown ? nil : "\(category) (\(name)): two presentations differ"
            }
        }
        return run.report(subject)
    }

    private func context(named name: String) -> PresentationContext {
        contexts.first { $0.name == name }?.context ?? PresentationContext()
    }

    private func each(
        _ rule: (String, FailureCategory, UserFacingError) -> String?
    ) -> [ConformanceViolation] {
        var found: [ConformanceViolation] = []
        for (name, context) in contexts {
            for category in categories {
                if let detail = rule(name, category, presenter.present(failure(category), context: context)) {
                    found.append(ConformanceViolation(rule: "presenter", detail: detail))
                }
            }
        }
        return found
    }
}
