/// Runs a store conformance kit's rules, each on the store `makeStore` returns, under a key of its own.
struct StoreRuleRunner<Store: Sendable>: Sendable {
    let makeStore: @Sendable () async throws -> Store
    let prefix = "conformance-\(UInt64.random(in: 0...UInt64.max))"

    func run(_ rules: [(String, @Sendable (Store, String) async throws -> [String])]) async -> [ConformanceViolation] {
        var violations: [ConformanceViolation] = []
        for (rule, body) in rules {
            do {
                let store = try await makeStore()
                for detail in try await body(store, "\(prefix)-\(rule)") {
                    violations.append(ConformanceViolation(rule: rule, detail: detail))
                }
            } catch {
                violations.append(ConformanceViolation(rule: rule, detail: "unexpected error: \(error)"))
            }
        }
        return violations
    }
}

/// Runs `body` and describes how it failed to throw ``CoordinationStoreError/invalidRequest(_:)``, if it did.
func invalidRequestProblem(_ name: String, _ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return "\(name) was accepted"
    } catch let error as CoordinationStoreError {
        if case .invalidRequest = error { return nil }
        return "\(name) threw \(error), not invalidRequest"
    } catch {
        return "\(name) threw \(error), not a CoordinationStoreError"
    }
}
