import ResilienceCore
import ResiliencePresentation
import Testing

@Suite("DefaultErrorPresenter: which failure a multi-source fetch explains")
struct PresenterHeadlineTests {
    let presenter = DefaultErrorPresenter()

    private func failed(
        _ id: SourceID, _ category: FailureCategory, retryAfter: Duration? = nil, cached: Bool = false
    ) -> PresentationContext.SourceStatus {
        let failure = FailureClassification(category: category, code: .unknown, retryAfter: retryAfter)
        return PresentationContext.SourceStatus(
            id: id, displayName: id.rawValue, failure: cached ? nil : failure, classification: failure,
            servedFromCache: cached)
    }

    private func delivered(_ id: SourceID, lastFailure: FailureCategory? = nil) -> PresentationContext.SourceStatus {
        PresentationContext.SourceStatus(
            id: id, displayName: id.rawValue, failure: nil,
            classification: lastFailure.map { FailureClassification(category: $0, code: .unknown) })
    }

    @Test("The most common category wins, the more actionable on ties; a countdown only when every one has a time")
    func headlineSelection() {
        let tie = PresentationContext(sources: [failed("a", .serverError), failed("b", .rateLimited)])
        #expect(presenter.headline(of: tie)?.category == .rateLimited)
        let majority = PresentationContext(sources: [
            failed("a", .serverError), failed("b", .rateLimited, retryAfter: .seconds(5)),
            failed("c", .rateLimited, retryAfter: .seconds(60)), failed("d", .timeout),
        ])
        #expect(presenter.headline(of: majority)?.category == .rateLimited)
        #expect(presenter.headline(of: majority)?.retryAfter == nil)
        let allTimed = PresentationContext(sources: [
            failed("a", .serverError, retryAfter: .seconds(90)), failed("b", .rateLimited, retryAfter: .seconds(60)),
            failed("c", .rateLimited, retryAfter: .seconds(30)),
        ])
        #expect(presenter.headline(of: allTimed)?.category == .rateLimited)
        #expect(presenter.headline(of: allTimed)?.retryAfter == .seconds(30))
        let fine = PresentationContext(sources: [delivered("x")])
        #expect(presenter.headline(of: fine) == nil)
        #expect(presenter.present(fine) == nil)
    }

    @Test(
        "Only unavailable sources count: not cache-served ones, live successes after retries, fallbacks, cancellations")
    func whatCounts() {
        let context = PresentationContext(sources: [
            delivered("retried", lastFailure: .timeout), delivered("fallback", lastFailure: .timeout),
            failed("cached", .rateLimited, retryAfter: .seconds(30), cached: true), failed("cancelled", .cancelled),
            failed("other-cancelled", .cancelled), failed("down", .serverError),
        ])
        #expect(presenter.headline(of: context)?.category == .serverError)
        #expect(presenter.headline(of: context)?.retryAfter == nil)
        let onlyCancelled = PresentationContext(sources: [failed("a", .cancelled), delivered("b")])
        #expect(presenter.headline(of: onlyCancelled) == nil)
    }

    @Test("The message is the one for the chosen failure; a missed policy is always explained")
    func presentsTheHeadline() {
        let context = PresentationContext(
            itemNoun: "jobs", sources: [failed("a", .networkUnreachable), failed("b", .networkUnreachable)],
            metPolicy: false)
        let chosen = presenter.headline(of: context)
        #expect(chosen?.category == .networkUnreachable)
        #expect(presenter.present(context) == chosen.map { presenter.present($0, context: context) })
        #expect(presenter.present(context)?.title == "You're Offline")
        let nothingRecorded = PresentationContext(
            itemNoun: "jobs", sources: [failed("a", .cancelled), failed("b", .cancelled)], metPolicy: false)
        #expect(presenter.present(nothingRecorded) == presenter.present(.unknown, context: nothingRecorded))
        #expect(presenter.present(PresentationContext(metPolicy: true)) == nil)
    }

    @Test("A fetch that missed its policy shows nothing, so it never says it is showing items from some sources")
    func missedPolicyIsNotPartial() {
        // `atLeast(2)` or all-or-nothing: one source delivered, the other failed, the fetch failed as a whole
        // (`AggregationError.presentationContext`: no items shown, policy not met).
        let context = PresentationContext(
            itemNoun: "jobs", sources: [delivered("lever"), failed("rss", .serverError)], itemsShown: 0,
            metPolicy: false)
        #expect(!context.isPartial)
        let error = presenter.present(context)
        #expect(error?.title == "Server Error")
        #expect(error?.message.contains("Showing") == false)
        #expect(error?.severity == .error)
        #expect(error?.showsRetry == true)
        let met = PresentationContext(
            itemNoun: "jobs", sources: [delivered("lever"), failed("rss", .serverError)], itemsShown: 3)
        #expect(presenter.present(met)?.message == "Showing jobs from 1 of 2 sources. Unavailable right now: rss.")
    }

    @Test(
        "Network-unreachable while a monitor says the device is online is the server's problem, in every language",
        arguments: PresentationStrings.bundledLanguages)
    func unreachableWhileOnline(language: String) {
        let strings = PresentationStrings.bundled(language: language)
        let presenter = DefaultErrorPresenter(strings: strings)
        let hostNotFound = FailureClassification(category: .networkUnreachable, code: .hostNotFound)
        let source = PresentationContext.SourceStatus(id: "acme", displayName: "Acme", failure: hostNotFound)
        let online = presenter.present(PresentationContext(sources: [source], metPolicy: false, isOnline: true))
        #expect(online?.isOffline == false)
        #expect(online?.title == strings.string("unreachable.title"))
        #expect(online?.code == .hostNotFound)
        let unknown = presenter.present(PresentationContext(sources: [source], metPolicy: false))
        #expect(unknown?.isOffline == true)
        // The system said the device had no connection then; the path came back since.
        let dropped = FailureClassification(category: .networkUnreachable, code: .noConnection)
        let lost = PresentationContext.SourceStatus(id: "acme", displayName: "Acme", failure: dropped)
        #expect(
            presenter.present(PresentationContext(sources: [lost], metPolicy: false, isOnline: true))?.title
                == strings.string("offline.title"))
        #expect(PresentationContext(isOffline: true, isOnline: true).isOnline == false)
    }

    @Test("An open breaker's message names a source whose breaker is open, not the first unavailable one")
    func circuitOpenNamesItsSource() {
        // at-least(3) missed: one delivered, one server error, two breakers open (the headline's category).
        let context = PresentationContext(
            itemNoun: "jobs",
            sources: [
                delivered("lever"), failed("rss", .serverError), failed("acme", .circuitOpen, retryAfter: .seconds(60)),
                failed("hooli", .circuitOpen, retryAfter: .seconds(30)),
            ], metPolicy: false)
        let error = presenter.present(context)
        #expect(error?.title == "Source Temporarily Unavailable")
        #expect(error?.message.hasPrefix("acme is temporarily unavailable.") == true)
    }
}
