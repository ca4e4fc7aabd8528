/// A stage that never looks at the operation's output, never produces one of its own, and calls the
/// operation at most once at a time: it only returns normally after a call of the operation did.
///
/// ``Pipeline`` runs a chain made only of such stages through a runner specialised when the pipeline is
/// built (see ``Pipeline``). Fallback (produces values of its own type) and hedging (calls the operation
/// concurrently) are not output-agnostic; neither is any stage this module does not know.
public protocol OutputAgnosticStrategy: ResilienceStrategy {}

extension TotalDeadlineStrategy: OutputAgnosticStrategy {}
extension TimeoutStrategy: OutputAgnosticStrategy {}
extension RetryStrategy: OutputAgnosticStrategy {}
extension CircuitBreakerStrategy: OutputAgnosticStrategy {}
extension RateLimiterStrategy: OutputAgnosticStrategy {}
extension EmptyStrategy: OutputAgnosticStrategy {}
extension ComposedStrategy: OutputAgnosticStrategy where Outer: OutputAgnosticStrategy, Inner: OutputAgnosticStrategy {}
extension EitherStrategy: OutputAgnosticStrategy where First: OutputAgnosticStrategy, Second: OutputAgnosticStrategy {}
