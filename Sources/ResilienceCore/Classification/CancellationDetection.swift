import Foundation

/// Recognises every spelling of "the caller cancelled".
public enum CancellationDetection {
    /// True for `CancellationError`, `URLError.cancelled` and `NSURLErrorCancelled` in any wrapping
    /// `NSError`.
    public static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let urlError = error as? URLError, urlError.code == .cancelled { return true }
        let nsError = error as NSError
        return nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled
    }
}
