import Foundation

/// Recognises every spelling of "the caller cancelled".
public enum CancellationDetection {
    /// True for `CancellationError`, `URLError.cancelled` and `NSURLErrorCancelled` in any wrapping
    /// `NSError`.
    public static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let urlError = error as? URLError { return urlError.code == .cancelled }
        // Only an `NSError` or an error that names its own domain can be in `NSURLErrorDomain`: any other
        // Swift error bridges to its type's name, so it is not bridged (bridging allocates an object and the
        // name on every failure a stage classifies).
        guard type(of: error) is NSError.Type || error is any CustomNSError else { return false }
        let nsError = error as NSError
        return nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled
    }
}
