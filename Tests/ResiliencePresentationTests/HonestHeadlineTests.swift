import ResilienceCore
import ResiliencePresentation
import Testing

/// Every mix of source outcomes, up to four sources, in every shipped language: the message names what
/// happened, and its category, code and countdown come only from the sources it names as unavailable.
@Suite("DefaultErrorPresenter: honest headlines over every combination of outcomes")
struct HonestHeadlineTests {
    /// What happened to one source.
    enum Outcome: CaseIterable {
        case succeeded, cached, failedTransient, failedPermanent, rateLimited
    }

    static let names = ["Alpha", "Bravo", "Charlie", "Delta"]

    /// The status of source `index` that ended with `outcome`.
    static func status(_ outcome: Outcome, index: Int) -> PresentationContext.SourceStatus {
        let id = SourceID(rawValue: names[index].lowercased())
        let name = names[index]
        switch outcome {
        case .succeeded:
            return .init(id: id, displayName: name, failure: nil, classification: nil)
        case .cached:
            // Served from cache because the live request was rate-limited: its wait must never become the
            // headline's countdown, nor its code the code of a message naming other sources.
            let reason = FailureClassification(
                category: .rateLimited, code: .rateLimited, retryAfter: .seconds(30))
            return .init(
                id: id, displayName: name, failure: nil, classification: reason, servedFromCache: true,
                cacheAge: .seconds(120 + 60 * index))
        case .failedTransient:
            let failure = FailureClassification(category: .serverError, code: .serverUnavailable)
            return .init(id: id, displayName: name, failure: failure, classification: failure)
        case .failedPermanent:
            let failure = FailureClassification(category: .invalidResponse, code: .malformedFeed)
            return .init(id: id, displayName: name, failure: failure, classification: failure)
        case .rateLimited:
            let failure = FailureClassification(
                category: .rateLimited, code: .rateLimited, retryAfter: .seconds(40 + 10 * index))
            return .init(id: id, displayName: name, failure: failure, classification: failure)
        }
    }

    /// Every sequence of outcomes of length 1 to 4 (5 + 25 + 125 + 625 = 780).
    static var combinations: [[Outcome]] {
        var all: [[Outcome]] = []
        var layer: [[Outcome]] = [[]]
        for _ in 1...4 {
            layer = layer.flatMap { prefix in Outcome.allCases.map { prefix + [$0] } }
            all += layer
        }
        return all
    }

    @Test(
        "Category, code and countdown come from the sources named unavailable",
        arguments: PresentationStrings.bundledLanguages)
    func everyCombination(language: String) throws {
        let strings = PresentationStrings.bundled(language: language)
        let presenter = DefaultErrorPresenter(strings: strings)
        let formatter = RelativeTimeFormatter(strings: strings)
        var checked = 0
        for outcomes in Self.combinations {
            let sources = outcomes.enumerated().map { Self.status($1, index: $0) }
            let context = PresentationContext(
                itemNoun: "jobs", sources: sources, itemsShown: 0,
                metPolicy: outcomes.contains { $0 == .succeeded || $0 == .cached })
            let unavailable = sources.filter { $0.failure != nil }
            let cached = sources.filter(\.servedFromCache)
            let error = presenter.present(context)
            let label = "\(language) \(outcomes)"
            guard let error else {
                #expect(unavailable.isEmpty && cached.isEmpty, "\(label): nothing said")
                continue
            }
            #expect(!(unavailable.isEmpty && cached.isEmpty), "\(label): a message for a clean fetch")
            #expect(!error.message.contains("{") && !error.title.contains("{"), "\(label): \(error)")
            if unavailable.isEmpty {
                #expect(error.retryAfter == nil, "\(label): a countdown from a cached source")
                #expect(cached.contains { $0.classification?.code == error.code }, "\(label): \(error.code)")
            } else {
                #expect(unavailable.contains { $0.failure?.code == error.code }, "\(label): \(error.code)")
                let times = unavailable.compactMap { $0.failure?.retryAfter }
                let expected = times.count == unavailable.count ? times.min() : nil
                #expect(error.retryAfter == expected, "\(label): countdown \(String(describing: error.retryAfter))")
            }
            for source in cached {
                let age = try #require(source.cacheAge)
                #expect(error.message.contains(source.displayName), "\(label): \(source.displayName) not named")
                #expect(
                    error.message.contains(formatter.string(for: age)), "\(label): no age for \(source.displayName)")
            }
            if sources.count > 1 && !unavailable.isEmpty && context.sourcesSucceeded > 0 && unavailable.count > 1 {
                let missing = strings.string(
                    "someUnavailable.missing", ["names": strings.list(unavailable.map(\.displayName))])
                #expect(error.message.contains(missing), "\(label): \(error.message)")
            }
            let banner = TerminalRenderer(environment: [:], isTerminal: false, strings: strings).banner(error)
            let countdown = strings.string("banner.retryIn", ["time": "x"]).split(separator: "x").first.map(String.init)
            if error.retryAfter == nil, let countdown {
                #expect(!banner.contains(countdown), "\(label): \(banner)")
            }
            checked += 1
        }
        #expect(checked == Self.combinations.count - 4)
    }

    @Test("The job-board round from the docs: a cached rate-limited source is named as cached, not as the countdown")
    func cachedSourceIsNotTheCountdown() {
        let presenter = DefaultErrorPresenter()
        let sources = [
            Self.status(.succeeded, index: 0), Self.status(.cached, index: 1),
            Self.status(.failedPermanent, index: 2), Self.status(.failedTransient, index: 3),
        ]
        let error = presenter.present(PresentationContext(itemNoun: "jobs", sources: sources, itemsShown: 12))
        #expect(
            error?.message
                == "Showing jobs from 2 of 4 sources. Unavailable right now: Charlie and Delta. "
                + "Saved: Bravo (3 minutes old).")
        #expect(error?.retryAfter == nil)
        // Equally common categories: the server error is the more actionable one.
        #expect(error?.code == .serverUnavailable)
    }
}
