import Foundation

/// One rule of a store conformance kit: its name, and a body that returns what it found broken (`nil` when the
/// rule held).
typealias StoreRule<Store> = (name: String, body: @Sendable (Store) throws -> String?)

extension ConformanceRun {
    /// Runs each rule on a fresh store from `makeStore`, handing the store to `disposeStore` when the rule is done.
    mutating func check<Store>(
        _ rules: [StoreRule<Store>], makeStore: () throws -> Store, disposeStore: (Store) -> Void
    ) async {
        for rule in rules {
            await check(rule.name) {
                let store: Store
                do {
                    store = try makeStore()
                } catch {
                    return "could not make a store: \(error)"
                }
                defer { disposeStore(store) }
                do {
                    return try rule.body(store)
                } catch {
                    return "unexpected error \(error)"
                }
            }
        }
    }
}

/// Drafts and checks the mutation store kits share.
enum MutationConformanceSupport {
    /// A draft for `entity` with a fresh idempotency key unless `key` is given.
    static func draft(
        _ entity: String, _ operation: MutationOperation = .create, key: String? = nil
    )
        -> MutationDraft
    {
        MutationDraft(
            entityType: "conformance", entityID: entity, operation: operation, payload: Data("{\"\(entity)\":1}".utf8),
            idempotencyKey: key ?? "key-\(entity)-\(operation)-\(UUID().uuidString)")
    }

    /// Whether `body` throws a ``MutationStoreError`` with code `DB_003`.
    static func isConstraintViolation(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return (error as? MutationStoreError)?.code == .constraintViolation
        }
    }
}
