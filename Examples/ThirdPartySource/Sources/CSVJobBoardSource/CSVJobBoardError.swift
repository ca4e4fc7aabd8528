import ResilienceCore

/// Why a CSV job board's body could not be read. Classifies itself (`invalid-response`, codes `CSV_001`…),
/// so every classifier and presenter in ResilienceKit understands it without registration.
public struct CSVJobBoardError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var code: FailureCode
    /// Where and why.
    public var detail: String

    /// The body is empty or has no header line.
    public static let missingHeader = FailureCode("CSV_001")
    /// The header lacks a required column.
    public static let missingColumn = FailureCode("CSV_002")
    /// A row has the wrong number of fields or an unterminated quote.
    public static let malformedRow = FailureCode("CSV_003")
    /// The body exceeds the size or row limit.
    public static let tooLarge = FailureCode("CSV_004")

    /// Creates an error.
    public init(_ code: FailureCode, detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `invalid-response` with this error's code; never transient.
    public var classification: FailureClassification {
        FailureClassification(
            category: .invalidResponse, code: code, isTransient: false, logLevel: .error, message: description)
    }

    /// `CSV_003: row 4 has 3 fields, expected 4`.
    public var description: String { "\(code): \(detail)" }
}
