/// The pure state machine behind ``RetryBudget``: requests and retries counted in time slices.
struct RetryBudgetState: Sendable {
    let ratio: Double
    let minimumRetries: Double
    let sliceNanoseconds: Int64
    private var requestSlices: [Int]
    private var retrySlices: [Int]
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
        requestSlices = Array(repeating: 0, count: bucketCount)
        retrySlices = Array(repeating: 0, count: bucketCount)
    }

    /// Retries currently allowed in the window.
    var allowance: Int {
        Int(min((ratio * Double(requests) + minimumRetries).rounded(.down), Double(Int32.max)))
    }

    /// Counts one first attempt.
    mutating func recordRequest(now: ResilienceInstant) {
        slide(to: now)
        requests += 1
        requestSlices[index] += 1
    }

    /// Takes one retry from the budget if the window allows it.
    mutating func tryWithdraw(now: ResilienceInstant) -> Bool {
        slide(to: now)
        guard retries < allowance else { return false }
        retries += 1
        retrySlices[index] += 1
        return true
    }

    private var index: Int { Int(currentSlice % Int64(requestSlices.count)) }

    /// Expires the slices that left the window.
    mutating func slide(to now: ResilienceInstant) {
        let nanoseconds = max(DurationArithmetic.seconds(now.offset), 0) * 1e9
        let slice = Int64(min(nanoseconds, 9e18)) / sliceNanoseconds
        guard slice > currentSlice else { return }
        let steps = min(slice - currentSlice, Int64(requestSlices.count))
        for step in 1...steps {
            let expired = Int((currentSlice + step) % Int64(requestSlices.count))
            requests -= requestSlices[expired]
            retries -= retrySlices[expired]
            requestSlices[expired] = 0
            retrySlices[expired] = 0
        }
        currentSlice = slice
    }
}
