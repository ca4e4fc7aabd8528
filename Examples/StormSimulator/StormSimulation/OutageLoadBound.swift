import Foundation

/// The outage goal's bound on a preset's load (server arrivals ÷ requests offered while the server is down),
/// as a function of the requests per second one pipeline sees: the one place the sweep and the report read it.
///
/// A pipeline that sees `r` requests/s learns of an outage from its first failures; what it may add before its
/// breaker and budget stop retrying is a fixed number of retries, spread over `r` requests per second. So the
/// bound is 1.10× wherever `r ≥ 1`, and rises log-linearly to 1.5× at `r = 0.02` (one request every 50 s):
///
///     bound(r) = 1.10                                    for r ≥ 1
///     bound(r) = 1.10 + 0.40 × ln(1 / r) ÷ ln(50)        for 0.02 ≤ r < 1
///     bound(r) = 1.50                                    for r < 0.02
public enum OutageLoadBound {
    /// The rate from which the tight bound applies, in requests per second per pipeline.
    public static let busyRate = 1.0
    /// The quietest rate the sweep judges, in requests per second per pipeline.
    public static let quietRate = 0.02
    /// The bound at ``busyRate`` and above.
    public static let busyBound = 1.10
    /// The bound at ``quietRate`` and below.
    public static let quietBound = 1.5

    /// The largest load ratio a preset may cause during a full outage when one pipeline sees `rate`
    /// requests per second.
    ///
    /// - Parameter rate: Requests per second one pipeline sees.
    public static func maximum(rate: Double) -> Double {
        guard rate < busyRate else { return busyBound }
        guard rate > quietRate else { return quietBound }
        return busyBound + (quietBound - busyBound) * log(busyRate / rate) / log(busyRate / quietRate)
    }

    /// The formula, as the report prints it.
    public static let formula = "1.10 for r ≥ 1/s; 1.10 + 0.40 × ln(1/r) ÷ ln 50 down to 1.5 at r = 0.02/s"
}
