import ResilienceCore
import ResiliencePresentation
import Testing

@Suite("DefaultErrorPresenter: golden English texts")
struct DefaultErrorPresenterTests {
    /// The texts an iPhone app shows (its lists refresh by pulling).
    let presenter = DefaultErrorPresenter(refreshAction: .pullToRefresh)

    private func present(
        _ category: FailureCategory, _ code: FailureCode, retryAfter: Duration? = nil,
        context: PresentationContext = PresentationContext(itemNoun: "jobs")
    ) -> UserFacingError {
        presenter.present(
            FailureClassification(category: category, code: code, retryAfter: retryAfter), context: context)
    }

    struct Golden: Sendable, CustomStringConvertible {
        var category: FailureCategory
        var code: FailureCode
        var retryAfter: Duration?
        var title: String
        var message: String
        var severity: UserFacingError.Severity
        var showsRetry: Bool
        var action: String?
        var description: String { "\(category)/\(code)" }
    }

    static let goldens: [Golden] = [
        Golden(
            category: .networkUnreachable, code: .noConnection, title: "You're Offline",
            message: "Check your internet connection and try again.", severity: .error, showsRetry: true,
            action: "Pull to refresh"),
        Golden(
            category: .timeout, code: .timedOut, title: "Request Timed Out",
            message: "The server took too long to respond. Please try again.", severity: .error, showsRetry: true,
            action: "Pull to refresh"),
        Golden(
            category: .rateLimited, code: .rateLimited, retryAfter: .seconds(300), title: "Rate Limit Reached",
            message: "Too many requests right now. Try again in 5 minutes.", severity: .warning, showsRetry: true,
            action: "Try again later"),
        Golden(
            category: .rateLimited, code: .rateLimited, title: "Rate Limit Reached",
            message: "Too many requests right now. Please try again in a few minutes.", severity: .warning,
            showsRetry: true, action: "Try again later"),
        Golden(
            category: .throttled, code: .rateLimitedLocally, retryAfter: .seconds(1), title: "Rate Limit Reached",
            message: "Too many requests right now. Try again in 1 second.", severity: .warning, showsRetry: true,
            action: "Try again later"),
        Golden(
            category: .authentication, code: .sessionExpired, title: "Session Expired",
            message: "Your session has expired. Please sign in again to continue.", severity: .error,
            showsRetry: false, action: "Sign in"),
        Golden(
            category: .authentication, code: .forbidden, title: "Access Denied",
            message: "Your account doesn't have permission to view this.", severity: .error, showsRetry: false),
        Golden(
            category: .notFound, code: .http(404), title: "Not Found",
            message: "What you're looking for isn't available anymore.", severity: .error, showsRetry: false),
        Golden(
            category: .clientError, code: .http(422), title: "Invalid Input",
            message: "Some of the information you entered isn't valid. Please check it and try again.",
            severity: .error, showsRetry: false, action: "Check your input"),
        Golden(
            category: .serverError, code: .serverUnavailable, title: "Server Error",
            message: "The server ran into a problem. Please try again in a few minutes.", severity: .error,
            showsRetry: true, action: "Pull to refresh"),
        Golden(
            category: .transient, code: .connectionReset, title: "Server Error",
            message: "The server ran into a problem. Please try again in a few minutes.", severity: .error,
            showsRetry: true, action: "Pull to refresh"),
        Golden(
            category: .circuitOpen, code: .circuitOpen, retryAfter: .seconds(90),
            title: "Source Temporarily Unavailable",
            message: "This service is temporarily unavailable. Try again in 2 minutes.", severity: .warning,
            showsRetry: true, action: "Try again later"),
        Golden(
            category: .insecureTransport, code: .insecureTransportBlocked, title: "Insecure Connection Blocked",
            message: "This connection was blocked because it isn't secure. No data was sent.", severity: .error,
            showsRetry: false),
        Golden(
            category: .storage, code: .diskFull, title: "Storage Full",
            message: "Your device is out of storage. Free up some space and try again.", severity: .error,
            showsRetry: true, action: "Free up space"),
        Golden(
            category: .storage, code: .corruptedData, title: "Data Corrupted",
            message: "Some saved data was damaged and couldn't be read. Refreshing will download it again.",
            severity: .error, showsRetry: true, action: "Pull to refresh"),
        Golden(
            category: .storage, code: .storageBusy, title: "Storage Problem",
            message: "Your data couldn't be saved on this device. Please try again.", severity: .error,
            showsRetry: true),
        Golden(
            category: .invalidResponse, code: .decodingFailed, title: "Unreadable Response",
            message: "We received a response we couldn't read. Please try again later.", severity: .error,
            showsRetry: true, action: "Try again later"),
        Golden(
            category: .conflict, code: .http(409), title: "Already Saved", message: "This change was already saved.",
            severity: .info, showsRetry: false),
        Golden(
            category: .cancelled, code: .cancelled, title: "Cancelled", message: "The request was cancelled.",
            severity: .info, showsRetry: true),
        Golden(
            category: .unknown, code: .unknown, title: "Something Went Wrong", message: "Please try again.",
            severity: .error, showsRetry: true, action: "Pull to refresh"),
        Golden(
            category: "quota-exceeded", code: "THIRD_001", title: "Something Went Wrong",
            message: "Please try again.", severity: .error, showsRetry: true, action: "Pull to refresh"),
    ]

    @Test("Every single-operation mapping", arguments: goldens)
    func golden(_ golden: Golden) {
        let error = present(golden.category, golden.code, retryAfter: golden.retryAfter)
        #expect(error.title == golden.title)
        #expect(error.message == golden.message)
        #expect(error.severity == golden.severity)
        #expect(error.showsRetry == golden.showsRetry)
        #expect(error.suggestedAction == golden.action)
        #expect(error.code == golden.code)
        #expect(error.retryAfter == golden.retryAfter)
    }

    static func sources(failures: [FailureClassification?]) -> PresentationContext {
        let names = ["Greenhouse", "Lever", "Workable", "Ashby", "RSS", "Indeed"]
        return PresentationContext(
            itemNoun: "jobs",
            sources: failures.enumerated().map { index, failure in
                PresentationContext.SourceStatus(
                    id: SourceID(names[index].lowercased()), displayName: names[index], failure: failure)
            },
            itemsShown: failures.contains { $0 == nil } ? 42 : 0)
    }

    @Test("Some sources unavailable while showing the rest")
    func partial() {
        let server = FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: 503)
        let timeout = FailureClassification(category: .timeout, code: .timedOut)
        let context = Self.sources(failures: [nil, server, nil, nil, timeout, nil])
        let error = presenter.present(server, context: context)
        #expect(error.title == "Some Sources Unavailable")
        #expect(error.message == "Showing jobs from 4 of 6 sources. Unavailable right now: Lever and RSS.")
        #expect(error.severity == .info)
        #expect(error.showsRetry == false)
        #expect(error.technicalDetails == "NET_014 server-error HTTP 503; sources: lever=NET_014, rss=NET_002")
    }

    @Test("One source temporarily unavailable (breaker open) while showing the others")
    func oneSourceBreakerOpen() {
        let open = FailureClassification(category: .circuitOpen, code: .circuitOpen, retryAfter: .seconds(30))
        let error = presenter.present(open, context: Self.sources(failures: [nil, open, nil]))
        #expect(error.title == "Source Temporarily Unavailable")
        #expect(error.message == "Lever is temporarily unavailable. Showing jobs from other sources.")
        #expect(error.severity == .info)
    }

    @Test("All sources unavailable")
    func allUnavailable() {
        let server = FailureClassification(category: .serverError, code: .serverUnavailable)
        let error = presenter.present(server, context: Self.sources(failures: [server, server, server]))
        #expect(error.title == "Sources Unavailable")
        #expect(error.message == "Couldn't load jobs from any source. Please try again in a few minutes.")
        #expect(error.severity == .error)
        #expect(error.showsRetry)
    }

    @Test("Every source gone for good (not found, rejected): no promise that trying again in a few minutes helps")
    func allUnavailablePermanently() {
        let gone = FailureClassification(category: .notFound, code: .http(404), httpStatus: 404)
        let rejected = FailureClassification(category: .clientError, code: .http(400), httpStatus: 400)
        for failures in [[gone, gone], [gone, rejected, gone]] {
            let error = presenter.present(gone, context: Self.sources(failures: failures))
            #expect(error.title == "Sources Unavailable")
            #expect(error.message == "Couldn't load jobs from any source.")
            #expect(!error.showsRetry && !error.isRecoverable && error.suggestedAction == nil, "\(error)")
        }
        // One source that may come back keeps the promise.
        let server = FailureClassification(category: .serverError, code: .serverUnavailable)
        let mixed = presenter.present(gone, context: Self.sources(failures: [gone, server, gone]))
        #expect(mixed.message == "Couldn't load jobs from any source. Please try again in a few minutes.")
        #expect(mixed.showsRetry)
    }

    @Test(
        "A failure that offers no Retry carries no countdown, even when the server sent Retry-After",
        arguments: [
            FailureClassification(category: .notFound, code: .http(404), httpStatus: 404),
            FailureClassification(category: .clientError, code: .http(413), httpStatus: 413),
            FailureClassification(category: .authentication, code: .unauthorized, httpStatus: 401),
            FailureClassification(category: .authentication, code: .forbidden, httpStatus: 403),
            FailureClassification(category: .conflict, code: .http(409), httpStatus: 409),
        ])
    func noRetryNoCountdown(failure: FailureClassification) {
        var failure = failure
        failure.retryAfter = .seconds(60)
        let error = presenter.present(failure, context: PresentationContext())
        #expect(!error.showsRetry)
        #expect(error.retryAfter == nil, "\(error)")
        let banner = TerminalRenderer(environment: ["NO_COLOR": "1"], isTerminal: false).banner(error)
        #expect(!banner.contains("Retry in"), "\(banner)")
        #expect(error.technicalDetails?.contains("retry-after 60s") == true, "the server's hint stays in the details")
    }

    @Test("Offline wins over 'all sources unavailable' because the person can act on it")
    func offlineWins() {
        let offline = FailureClassification(category: .networkUnreachable, code: .noConnection)
        let error = presenter.present(offline, context: Self.sources(failures: [offline, offline]))
        #expect(error.title == "You're Offline")
    }

    @Test("A breaker-open single source names the source")
    func namedSource() {
        let open = FailureClassification(category: .circuitOpen, code: .circuitOpen)
        let error = presenter.present(open, context: Self.sources(failures: [open]))
        #expect(error.message == "Greenhouse is temporarily unavailable. Please try again in a few minutes.")
        #expect(error.showsRetry == false)
    }

    @Test("The action to try again says what works where the message is shown, in every bundled language")
    func refreshActionFollowsWhereTheMessageIsShown() throws {
        let timeout = FailureClassification(category: .timeout, code: .timedOut)
        let offline = FailureClassification(category: .networkUnreachable, code: .noConnection)
        let expected: [String: [RefreshAction: String]] = [
            "en": [.pullToRefresh: "Pull to refresh", .refresh: "Refresh", .reloadPage: "Reload the page"],
            "de": [
                .pullToRefresh: "Zum Aktualisieren ziehen", .refresh: "Aktualisieren", .reloadPage: "Seite neu laden",
            ],
        ]
        for (language, actions) in expected {
            for (action, words) in actions {
                let presenter = DefaultErrorPresenter(strings: .bundled(language: language), refreshAction: action)
                for failure in [timeout, offline] {
                    let shown = presenter.present(failure, context: PresentationContext())
                    #expect(shown.suggestedAction == words, "\(language) \(action.key) \(failure.code)")
                }
            }
        }
        // Outside iOS, iPadOS and visionOS there is no list to pull: the default is "Refresh".
        #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(visionOS)
        #expect(RefreshAction.platformDefault == .pullToRefresh)
        #else
        #expect(DefaultErrorPresenter().present(timeout, context: PresentationContext()).suggestedAction == "Refresh")
        #endif
        // An app's own action, worded by its own strings.
        let custom = DefaultErrorPresenter(
            strings: PresentationStrings.english.overriding(["action.shake": "Shake to refresh"]),
            refreshAction: RefreshAction(key: "action.shake"))
        #expect(custom.present(timeout, context: PresentationContext()).suggestedAction == "Shake to refresh")
    }

    @Test("A hostile failure message (1 MB, terminal escapes, line breaks, bidi overrides) stays short and on one line")
    func hostileMessageInDetails() throws {
        let hostile =
            "\u{1B}]0;owned\u{7}\u{1B}[2Jtoken=SECRET123 \u{202E}txt.exe\r\nFAKE: line\u{2028}FAKE2\u{2029}"
            + String(repeating: "A", count: 1_048_576)
        let failure = FailureClassification(category: .serverError, code: .serverUnavailable, message: hostile)
        for language in PresentationStrings.bundledLanguages {
            let error = DefaultErrorPresenter(strings: .bundled(language: language)).present(
                failure, context: PresentationContext())
            let details = try #require(error.technicalDetails)
            #expect(details.count <= 1_100, "\(details.count) characters")
            #expect(details.hasSuffix("…"))
            #expect(
                !details.unicodeScalars.contains {
                    [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
                })
            #expect(details.hasPrefix("NET_014 server-error: "), "\(details.prefix(80))")
            #expect(details.contains("FAKE: line") && !details.contains("SECRET123"))
            #expect(error.message.count < 300 && !error.message.contains("AAAA"))
        }
    }

    @Test("A failure message of one character stacked with a million combining marks is cut like any other")
    func combiningMarksInDetails() throws {
        // One extended grapheme cluster: counted in characters, it never reaches the bound.
        let stacked = "Z" + String(repeating: "\u{0301}", count: 1_000_000)
        let failure = FailureClassification(category: .serverError, code: .serverUnavailable, message: stacked)
        let details = try #require(presenter.present(failure, context: PresentationContext()).technicalDetails)
        #expect(details.unicodeScalars.count <= 1_100, "\(details.unicodeScalars.count) scalars")
        #expect(details.utf8.count <= 4_400, "\(details.utf8.count) bytes")
        #expect(details.unicodeScalars.starts(with: "NET_014 server-error: Z\u{0301}".unicodeScalars))
        #expect(details.hasSuffix("…"))
    }

    @Test("Raw error text never reaches title or message; details are redacted")
    func noRawDumps() {
        let raw = "Error Domain=NSURLErrorDomain Code=-1001 \"timed out\" URL=https://x.io/?api_key=SECRET123"
        let failure = FailureClassification(
            category: .timeout, code: .timedOut, httpStatus: 504, retryAfter: .seconds(5), message: raw)
        let error = presenter.present(failure, context: PresentationContext())
        #expect(!error.title.contains("Domain") && !error.message.contains("Domain"))
        #expect(!error.message.contains("NSURLError") && !error.message.contains("-1001"))
        #expect(error.technicalDetails?.hasPrefix("NET_002 timeout HTTP 504 retry-after 5s: Error Domain") == true)
        #expect(error.technicalDetails?.contains("SECRET123") == false)
    }
}
