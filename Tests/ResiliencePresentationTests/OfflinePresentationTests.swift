import ResilienceCore
import ResiliencePresentation
import Testing

@Suite("DefaultErrorPresenter: the offline state")
struct OfflinePresentationTests {
    static let sources = [
        PresentationContext.SourceStatus(
            id: "lever", displayName: "Lever",
            failure: FailureClassification(category: .networkUnreachable, code: .noConnection)),
        PresentationContext.SourceStatus(
            id: "rss", displayName: "RSS",
            failure: FailureClassification(category: .serverError, code: .serverUnavailable, retryAfter: .seconds(30))),
    ]

    @Test("Offline explains everything: the data's age and the queued changes, no countdown, no Retry button")
    func knownOffline() throws {
        let presenter = DefaultErrorPresenter()
        let context = PresentationContext(
            itemNoun: "jobs", sources: Self.sources, itemsShown: 12, metPolicy: false, isOffline: true,
            queuedMutations: 3, dataAge: .seconds(300))
        let error = try #require(presenter.present(context))
        #expect(error.isOffline && error.title == "You're Offline")
        #expect(
            error.message
                == "Showing jobs from 5 minutes ago. They'll refresh when you're back online. "
                + "3 changes will be sent when you're back online.")
        #expect(error.retryAfter == nil && !error.showsRetry && error.suggestedAction == nil)
        #expect(error.code == .noConnection)
        let banner = TerminalRenderer(environment: [:], isTerminal: false).banner(error)
        #expect(banner.hasPrefix("⊘ You're Offline: Showing jobs from 5 minutes ago."))
        #expect(!banner.contains("Retry in"))
    }

    @Test("One queued change, no known age; offline even when every source delivered from a cache")
    func singularAndNoAge() throws {
        let presenter = DefaultErrorPresenter()
        let cached = PresentationContext.SourceStatus(
            id: "lever", displayName: "Lever", failure: nil, classification: nil, servedFromCache: true,
            cacheAge: .seconds(60))
        let context = PresentationContext(itemNoun: "jobs", sources: [cached], isOffline: true, queuedMutations: 1)
        let error = try #require(presenter.present(context))
        #expect(
            error.message
                == "Check your internet connection and try again. 1 change will be sent when you're back online.")
        #expect(error.isOffline)
    }

    @Test(
        "A single operation's failure while the device is known offline reads as offline, never as the server's fault",
        arguments: PresentationStrings.bundledLanguages)
    func knownOfflineSingleOperation(language: String) {
        let strings = PresentationStrings.bundled(language: language)
        let presenter = DefaultErrorPresenter(strings: strings)
        let context = PresentationContext(itemNoun: "jobs", itemsShown: 4, isOffline: true, queuedMutations: 2)
        let failures = [
            FailureClassification(category: .timeout, code: .timedOut),
            FailureClassification(category: .serverError, code: .serverUnavailable, retryAfter: .seconds(30)),
            FailureClassification(category: .networkUnreachable, code: .hostNotFound),
        ]
        for failure in failures {
            let error = presenter.present(failure, context: context)
            let label = "\(language) \(failure.category)"
            #expect(error.isOffline, "\(label): \(error)")
            #expect(error.title == strings.string("offline.title"), "\(label): \(error.title)")
            #expect(error.message.contains(strings.string("offline.queued.other", ["count": "2"])), "\(label)")
            #expect(error.retryAfter == nil && !error.showsRetry, "\(label): \(error)")
            #expect(error.code == (failure.category == .networkUnreachable ? failure.code : .noConnection), "\(label)")
        }
    }

    @Test("Offline inferred from a failure alone keeps the Retry button and pull to refresh")
    func inferredOffline() throws {
        let presenter = DefaultErrorPresenter(refreshAction: .pullToRefresh)
        let error = presenter.present(
            FailureClassification(category: .networkUnreachable, code: .noConnection),
            context: PresentationContext(queuedMutations: 2))
        #expect(error.isOffline && error.showsRetry && error.suggestedAction == "Pull to refresh")
        #expect(error.message.hasSuffix("2 changes will be sent when you're back online."))
    }

    @Test("The data's age and a cached source's age read no older than they are")
    func agesRoundDown() throws {
        let presenter = DefaultErrorPresenter()
        let offline = PresentationContext(
            itemNoun: "jobs", sources: Self.sources, itemsShown: 12, isOffline: true, dataAge: .seconds(119))
        #expect(try #require(presenter.present(offline)).message.hasPrefix("Showing jobs from 1 minute ago."))
        let cached = PresentationContext.SourceStatus(
            id: "cached", displayName: "Cached", failure: nil,
            classification: FailureClassification(category: .serverError, code: .serverUnavailable),
            servedFromCache: true, cacheAge: .milliseconds(1700))
        let partial = PresentationContext(itemNoun: "jobs", sources: [Self.sources[1], cached], itemsShown: 3)
        #expect(try #require(presenter.present(partial)).message.contains("Saved: Cached (1 second old)."))
    }

    @Test("Every bundled language has the offline texts", arguments: PresentationStrings.bundledLanguages)
    func localized(language: String) throws {
        let strings = PresentationStrings.bundled(language: language)
        let presenter = DefaultErrorPresenter(strings: strings)
        for (queued, age) in [(0, nil), (1, Duration.seconds(90)), (5, Duration.seconds(7200))] as [(Int, Duration?)] {
            let context = PresentationContext(
                itemNoun: "jobs", sources: Self.sources, isOffline: true, queuedMutations: queued, dataAge: age)
            let error = try #require(presenter.present(context))
            #expect(
                !error.message.contains("{") && !error.message.contains("offline."), "\(language): \(error.message)")
            if queued > 0 { #expect(error.message.contains(String(queued)), "\(language): \(error.message)") }
            if let age {
                let text = RelativeTimeFormatter(strings: strings).string(forAge: age)
                #expect(error.message.contains(text), "\(language): \(error.message)")
            }
        }
    }
}
