import Foundation
import ResilienceTesting
import ResilienceTransport

/// Collects telemetry events.
final class RecordingSink: TelemetrySink {
    let events = LockedBox<[ResilienceEvent]>([])
    func receive(_ event: ResilienceEvent) { events.mutate { $0.append(event) } }
    func kinds() -> [ResilienceEventKind] { events.value.map(\.kind) }
}
