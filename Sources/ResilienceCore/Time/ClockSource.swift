/// The storage of a ``ResilienceClock``: the wrapped clock's two operations, behind one reference.
@usableFromInline
final class ClockSource: Sendable {
    @usableFromInline let readNow: @Sendable () -> ResilienceInstant
    @usableFromInline let sleepUntil: @Sendable (ResilienceInstant) async throws -> Void

    init(
        readNow: @escaping @Sendable () -> ResilienceInstant,
        sleepUntil: @escaping @Sendable (ResilienceInstant) async throws -> Void
    ) {
        self.readNow = readNow
        self.sleepUntil = sleepUntil
    }
}
