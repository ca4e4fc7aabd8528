import ResilienceCore
import ResiliencePresentation

// `presentation-probe`: prints, as terminal banners, what the default presenter tells a person about a rate limit
// and about being offline with changes queued. The presentation tests run a copy of it from a directory without
// this package's resource bundles, as a binary copied alone into a container image runs.

let presenter = DefaultErrorPresenter(refreshAction: .refresh)
let terminal = TerminalRenderer(environment: [:], isTerminal: false)
let rateLimited = FailureClassification(category: .rateLimited, code: .rateLimited, retryAfter: .seconds(300))
print(terminal.banner(presenter.present(rateLimited, context: PresentationContext())))
if let offline = presenter.present(PresentationContext(itemNoun: "events", isOffline: true, queuedMutations: 3)) {
    print(terminal.banner(offline))
}
