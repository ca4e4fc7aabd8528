/// A storage failure, typed so nothing is dropped silently.
public struct MutationStoreError: ClassifiedError, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var code: FailureCode
    /// Details from the storage engine.
    public var message: String

    /// Creates an error with one of the `DB_` codes.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: Details from the storage engine.
    public init(_ code: FailureCode, message: String) {
        self.code = code
        self.message = message
    }

    /// Category ``FailureCategory/storage``; busy is transient, everything else is not. Corruption, a failed
    /// migration and a file moved away that could not be written back are logged as critical.
    public var classification: FailureClassification {
        let logLevel: LogLevel =
            switch code {
            case .corruptedData, .migrationFailed, .storageFileMoved: .critical
            default: .error
            }
        return FailureClassification(
            category: .storage, code: code, isTransient: code == .storageBusy, logLevel: logLevel, message: message)
    }

    /// `DB_005: disk full`.
    public var description: String { "\(code): \(message)" }
}
