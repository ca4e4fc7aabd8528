import Foundation

/// A conformance kit for third-party ``MutationMetadataStore`` implementations: the key/value table beside a
/// mutation queue.
///
/// Give it a factory that makes a fresh, empty store; it checks the table's contract one rule at a time, each
/// on its own store: an unknown key has no value, a value round-trips and is overwritten, `nil` deletes, keys are
/// independent, and a value or key past ``MutationMetadataLimits`` is refused with `DB_003`, the stored value kept.
/// It works with any test framework:
///
/// ```swift
/// @Test func conforms() async throws {
///     try await MutationMetadataStoreConformance { try MyStore(path: temporaryPath()) }.check()
/// }
/// ```
public struct MutationMetadataStoreConformance: ConformanceKit {
    /// Makes a fresh, empty store for each rule.
    public let makeStore: @Sendable () throws -> any MutationMetadataStore
    /// Called with each store when its rule is done (close it, delete its file).
    public let disposeStore: @Sendable (any MutationMetadataStore) -> Void

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - disposeStore: Called with each store when its case is done.
    ///   - makeStore: Makes a fresh, empty store for each case.
    public init(
        disposeStore: @escaping @Sendable (any MutationMetadataStore) -> Void = { _ in },
        makeStore: @escaping @Sendable () throws -> any MutationMetadataStore
    ) {
        self.makeStore = makeStore
        self.disposeStore = disposeStore
    }

    /// `"MutationMetadataStore"`.
    public var subject: String { "MutationMetadataStore" }

    /// Runs every rule, one case each, on a fresh store.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check(Self.rules, makeStore: makeStore, disposeStore: disposeStore)
        return run.report(subject)
    }

    private static let rules: [StoreRule<any MutationMetadataStore>] = [
        (
            "round-trip-and-overwrite",
            { store in
                guard try store.metadata(forKey: "k") == nil else { return "an unknown key has a value" }
                try store.setMetadata(Data([1]), forKey: "k")
                guard try store.metadata(forKey: "k") == Data([1]) else { return "a stored value did not come back" }
                try store.setMetadata(Data([2]), forKey: "k")
                return try store.metadata(forKey: "k") == Data([2]) ? nil : "setMetadata did not overwrite"
            }
        ),
        (
            "nil-deletes",
            { store in
                try store.setMetadata(Data([1]), forKey: "k")
                try store.setMetadata(nil, forKey: "k")
                guard try store.metadata(forKey: "k") == nil else { return "setMetadata(nil) did not delete" }
                try store.setMetadata(nil, forKey: "never-set")
                return try store.metadata(forKey: "never-set") == nil ? nil : "deleting an unknown key stored a value"
            }
        ),
        (
            "keys-independent",
            { store in
                try store.setMetadata(Data([1]), forKey: "a")
                try store.setMetadata(Data([2]), forKey: "b")
                try store.setMetadata(nil, forKey: "a")
                return try store.metadata(forKey: "b") == Data([2]) ? nil : "changing one key changed another"
            }
        ),
        (
            "values-bounded",
            { store in
                let largest = Data(count: MutationMetadataLimits.maximumValueBytes)
                try store.setMetadata(largest, forKey: "k")
                guard try store.metadata(forKey: "k") == largest else {
                    return "a value at the limit did not come back"
                }
                let longKey = String(repeating: "k", count: MutationMetadataLimits.maximumKeyBytes + 1)
                for (value, key, what) in [
                    (Data(count: MutationMetadataLimits.maximumValueBytes + 1), "k", "a value over the limit"),
                    (Data([1]), longKey, "a key over the limit"),
                ] {
                    do {
                        try store.setMetadata(value, forKey: key)
                        return "\(what) was stored"
                    } catch let error as MutationStoreError where error.code == .constraintViolation {
                        continue
                    } catch {
                        return "\(what) threw \(error), not DB_003"
                    }
                }
                return try store.metadata(forKey: "k") == largest ? nil : "a refused value replaced the stored one"
            }
        ),
    ]
}
