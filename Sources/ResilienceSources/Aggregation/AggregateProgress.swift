/// One step of a multi-source fetch, as delivered by ``Aggregator/progress(for:)``.
public enum AggregateProgress<Item: Sendable>: Sendable {
    /// A source finished; `completed` of `total` sources have finished so far.
    case sourceCompleted(SourceReport, completed: Int, total: Int)
    /// The fetch finished with this result; the sequence ends after it.
    case finished(AggregateResult<Item>)
}
