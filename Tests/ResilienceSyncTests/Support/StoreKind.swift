import Foundation
import ResilienceSync
import ResilienceTesting
import Testing

/// The two stores that must behave identically under the ``MutationStore`` contracts (queue, failed list, metadata).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case memory

    var testDescription: String { rawValue }

    /// A new empty store of this kind, and a closure that disposes of it.
    func make(
        coalescing: Bool = false, metadataKeys: Int = MutationMetadataLimits.defaultMaximumKeyCount
    ) throws -> (store: any MutationStore, dispose: @Sendable () -> Void) {
        switch self {
        case .memory:
            return (
                InMemoryMutationStore(coalescesUpdatesBeforeDelete: coalescing, maximumMetadataKeyCount: metadataKeys),
                {}
            )
        case .sqlite:
            let directory = TemporaryDirectory()
            var configuration = SQLiteMutationStore.Configuration()
            configuration.coalescesUpdatesBeforeDelete = coalescing
            configuration.maximumMetadataKeyCount = metadataKeys
            let store = try SQLiteMutationStore(path: directory.path("queue.sqlite"), configuration: configuration)
            return (
                store,
                {
                    try? store.close(); directory.remove()
                }
            )
        }
    }
}
