import Foundation

/// A conformance kit for third-party ``MutationMetadataStore`` implementations: the key/value table beside a
/// mutation queue.
///
/// Give it a factory that makes a fresh, empty store; it checks the table's contract one rule at a time, each
/// on its own store: an unknown key has no value, a value round-trips and is overwritten, `nil` deletes, keys are
/// independent, a value or key past ``MutationMetadataLimits`` is refused with `DB_003`, the stored value kept, and
/// so is a new key once the table holds ``maximumKeyCount`` keys, while those keys still take new values and a
/// deletion makes room. It works with any test framework:
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
    /// How many keys the stores `makeStore` returns hold, as they are configured.
    public let maximumKeyCount: Int

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - maximumKeyCount: How many keys the stores `makeStore` returns hold, as they are configured (at least 1).
    ///     Default: ``MutationMetadataLimits/defaultMaximumKeyCount`` (256).
    ///   - disposeStore: Called with each store when its case is done.
    ///   - makeStore: Makes a fresh, empty store for each case.
    public init(
        maximumKeyCount: Int = MutationMetadataLimits.defaultMaximumKeyCount,
        disposeStore: @escaping @Sendable (any MutationMetadataStore) -> Void = { _ in },
        makeStore: @escaping @Sendable () throws -> any MutationMetadataStore
    ) {
        self.maximumKeyCount = max(1, maximumKeyCount)
        self.makeStore = makeStore
        self.disposeStore = disposeStore
    }

    /// `"MutationMetadataStore"`.
    public var subject: String { "MutationMetadataStore" }

    /// Runs every rule, one case each, on a fresh store.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check(
            Self.rules + [Self.keysBounded(maximumKeyCount)], makeStore: makeStore, disposeStore: disposeStore)
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

    /// Fills the table to `maximumKeyCount` keys, then checks a new key is refused with `DB_003` and not stored, a
    /// stored key still takes a new value, and a deleted key makes room for a new one.
    private static func keysBounded(_ maximumKeyCount: Int) -> StoreRule<any MutationMetadataStore> {
        (
            "keys-bounded",
            { store in
                for index in 0..<maximumKeyCount { try store.setMetadata(Data([1]), forKey: "key-\(index)") }
                do {
                    try store.setMetadata(Data([1]), forKey: "one-too-many")
                    return "a new key past the \(maximumKeyCount) keys the table holds was stored"
                } catch let error as MutationStoreError where error.code == .constraintViolation {
                } catch {
                    return "a new key past the limit threw \(error), not DB_003"
                }
                guard try store.metadata(forKey: "one-too-many") == nil else { return "a refused key has a value" }
                try store.setMetadata(Data([2]), forKey: "key-0")
                guard try store.metadata(forKey: "key-0") == Data([2]) else {
                    return "a stored key did not take a new value in a full table"
                }
                try store.setMetadata(nil, forKey: "key-0")
                try store.setMetadata(Data([3]), forKey: "after-a-deletion")
                return try store.metadata(forKey: "after-a-deletion") == Data([3])
                    ? nil : "a deletion made no room for a new key"
            }
        )
    }
}
