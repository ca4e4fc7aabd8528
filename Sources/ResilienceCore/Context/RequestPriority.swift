/// How much a request matters when there is not room for every request: under overload, limiters shed the
/// lowest priorities first and retry budgets keep their last retries for the highest.
///
/// Three levels ship (``critical``, ``default``, ``sheddable``, after Envoy's and gRPC's request classes); any
/// other level is a number between them, and compares by its ``rawValue`` (higher matters more). A stage
/// reads it from ``ResilienceContext/priority``; a caller sets it per request:
///
/// ```swift
/// var context = ResilienceContext(key: "search", priority: .sheddable)   // prefetch: shed it first
/// ```
public struct RequestPriority: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The level: higher matters more. ``critical`` is 300, ``default`` 200, ``sheddable`` 100.
    public let rawValue: Int

    /// Creates a level.
    ///
    /// - Parameter rawValue: The level: higher matters more (``sheddable`` is 100, ``default`` 200, ``critical``
    ///   300).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A request the user is waiting for and that must not fail while anything else can give way (a payment,
    /// a login): shed last.
    public static let critical = RequestPriority(rawValue: 300)
    /// An ordinary request.
    public static let `default` = RequestPriority(rawValue: 200)
    /// A request that can be dropped under overload (prefetch, analytics, background refresh): shed first.
    public static let sheddable = RequestPriority(rawValue: 100)

    /// Whether `lhs` matters less than `rhs` (inlinable: a limiter compares priorities on every admission).
    @inlinable
    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `critical`, `default`, `sheddable`, or the number of any other level.
    public var description: String {
        switch self {
        case .critical: "critical"
        case .default: "default"
        case .sheddable: "sheddable"
        default: "priority(\(rawValue))"
        }
    }
}
