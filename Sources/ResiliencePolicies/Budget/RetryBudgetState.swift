/// The pure state machine behind ``RetryBudget``: requests and retries counted in time slices.
struct RetryBudgetState: Sendable {
    let ratio: Double
    let minimumRetries: Double
    let sliceNanoseconds: Int64
    /// Requests and retries per time slice, in one array (one allocation per budget, not two).
    private var slices: [(requests: Int, retries: Int)]
    private var currentSlice: Int64 = 0
    private(set) var requests = 0
    private(set) var retries = 0

    init(configuration: RetryBudgetConfiguration) {
        let bucketCount = min(max(configuration.buckets, 1), 1000)
        let window = max(DurationArithmetic.clamp(configuration.window), .milliseconds(1))
        let windowNanoseconds = max(Int64(DurationArithmetic.seconds(window) * 1e9), Int64(bucketCount))
        ratio = configuration.ratio.isFinite ? min(max(configuration.ratio, 0), 1_000) : 0
        let perSecond = configuration.minimumPerSecond.isFinite ? max(configuration.minimumPerSecond, 0) : 0
        minimumRetries = min(perSecond * DurationArithmetic.seconds(window), 1e12)
        sliceNanoseconds = windowNanoseconds / Int64(bucketCount)
        slices = Array(repeating: (0, 0), count: bucketCount)
    }

    /// Retries currently allowed in the window.
    var allowance: Int {
        Int(min((ratio * Double(requests) + minimumRetries).rounded(.down), Double(Int32.max)))
    }

    /// Counts one first attempt.
    mutating func recordRequest(now: ResilienceInstant) {
        slide(to: now)
        requests += 1
        slices[index].requests += 1
    }

    /// Takes one retry from the budget if the window allows it.
    mutating func tryWithdraw(now: ResilienceInstant) -> Bool {
        slide(to: now)
        guard retries < allowance else { return false }
        retries += 1
        slices[index].retries += 1
        return true
    }

    /// The slot of ``currentSlice`` in the slice arrays, kept with it so the hot path does not divide.
    private var index = 0
    /// Where ``currentSlice`` ends on the clock: until then `slide` has nothing to do (a comparison, no
    /// conversion).
    private var currentSliceEnd: Duration = .zero

    /// Expires the slices that left the window.
    mutating func slide(to now: ResilienceInstant) {
        guard now.offset >= currentSliceEnd else { return }
        let slice = max(DurationArithmetic.nanoseconds(now.offset), 0) / sliceNanoseconds
        let (end, overflow) = (slice + 1).multipliedReportingOverflow(by: sliceNanoseconds)
        currentSliceEnd = overflow ? .seconds(Int64.max) : .nanoseconds(end)
        guard slice > currentSlice else { return }
        let steps = min(slice - currentSlice, Int64(slices.count))
        for step in 1...steps {
            let expired = Int((currentSlice + step) % Int64(slices.count))
            requests -= slices[expired].requests
            retries -= slices[expired].retries
            slices[expired] = (0, 0)
        }
        currentSlice = slice
        index = Int(slice % Int64(slices.count))
    }
}
