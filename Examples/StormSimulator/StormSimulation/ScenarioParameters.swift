/// The traffic and server a run simulates: every setting a scenario uses, each one a command-line flag of
/// `storm-simulator`, so anyone can run the point they care about instead of the one the defaults describe.
///
/// A `nil` setting keeps the scenario's own default (listed with each flag in ``usage``), scaled down in quick
/// mode; a setting that is given is used as is in every scenario it applies to.
public struct ScenarioParameters: Sendable, Hashable {
    /// Requests per second one client offers (`--rate-per-client`); `nil`: 4 for server-facing rows, 0.5 for
    /// app-facing ones.
    public var ratePerClient: Double?
    /// Requests per second all clients offer together (`--offered`).
    public var offered: Double?
    /// Requests per second the server can serve (`--capacity`), exactly: its workers at the scenario's mean
    /// service time, stretched when the capacity is not a whole number of workers; `nil`: the scenario's own
    /// headroom over the offered load (3× in most scenarios).
    public var capacity: Double?
    /// Seconds of full outage (`--outage`).
    public var outage: Int?
    /// Seconds the server stops serving while requests queue (`--stall`).
    public var stall: Int?
    /// A repeating outage (`--flap UP,DOWN`): seconds up, then seconds down.
    public var flap: Flap?
    /// The failure probability of a brownout (`--brownout`); `nil`: a list of levels from 0.05 to 0.7.
    public var brownout: Double?
    /// Seconds measured after a fault ends (`--recovery`).
    public var recovery: Int?
    /// The strategies to run besides the baselines (`--preset`): a shipped preset's name or a named tuned
    /// row; `nil`: every row.
    public var preset: String?
    /// How many seeds, from the first one (`--seeds`); `nil`: 20, or 2 in quick mode.
    public var seedCount: Int?
    /// The server's concurrent slots (`--slots`); `nil`: 100 in the adaptive and priority scenarios.
    public var slots: Int?
    /// The server's slots after the change (`--slots-after`); `nil`: 40 in the adaptive scenario.
    public var slotsAfter: Int?
    /// Seconds into the run at which the slots change (`--change-at`); `nil`: 60 in the adaptive scenario.
    public var changeAt: Int?
    /// Offered load as a multiple of the server's capacity (`--overload`); `nil`: 2.
    public var overload: Double?
    /// Seconds in one window of the quota the server advertises (`--quota-window`); `nil`: 10 in the quota
    /// scenario.
    public var quotaWindow: Int?

    /// A repeating outage: up for `up` seconds, then down for `down` seconds, from the start of the run.
    public struct Flap: Sendable, Hashable {
        /// Seconds the server serves normally in each cycle.
        public var up: Int
        /// Seconds it answers every request with `503` at once.
        public var down: Int

        /// Creates a cycle.
        ///
        /// - Parameters:
        ///   - up: Seconds the server serves normally in each cycle (≥ 1).
        ///   - down: Seconds it answers every request with `503` at once (≥ 1).
        public init(up: Int, down: Int) {
            self.up = up
            self.down = down
        }
    }

    /// The scenario defaults.
    public init() {}

    /// The names ``preset`` accepts.
    public static let presetNames = ["standard", "interactive", "background", "budget-only", "hedged"]

    /// Whether the row `strategy` runs with these parameters: baselines and calibrations always do.
    func runs(_ strategy: Strategy) -> Bool {
        guard let preset, strategy.role == .shipped || strategy.role == .tuned else { return true }
        return StrategyCatalog.presetName(of: strategy) == preset
    }

    /// What a malformed flag is.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The flag.
        public var flag: String
        /// What it needs.
        public var expected: String

        /// `--flap needs UP,DOWN: two whole numbers of seconds ≥ 1`.
        public var description: String { "\(flag) needs \(expected)" }
    }

    /// Reads the value of `flag` into these parameters: `true` when `flag` is one of them, `false` when it is
    /// not a scenario flag. Throws when the value is missing or out of range.
    ///
    /// - Parameters:
    ///   - flag: The flag, such as `--outage`.
    ///   - value: Reads the flag's value (called once, only for flags that take one).
    public mutating func read(_ flag: String, value: () -> String?) throws(ParseError) -> Bool {
        func number(_ range: ClosedRange<Double>, _ expected: String) throws(ParseError) -> Double {
            guard let text = value(), let parsed = Double(text), parsed.isFinite, range.contains(parsed) else {
                throw ParseError(flag: flag, expected: expected)
            }
            return parsed
        }
        func seconds(_ range: ClosedRange<Int>) throws(ParseError) -> Int {
            guard let text = value(), let parsed = Int(text), range.contains(parsed) else {
                throw ParseError(flag: flag, expected: "whole seconds in \(range.lowerBound)...\(range.upperBound)")
            }
            return parsed
        }
        switch flag {
        case "--rate-per-client": ratePerClient = try number(0.001...1000, "requests/s in 0.001...1000")
        case "--offered": offered = try number(0.01...100_000, "requests/s in 0.01...100000")
        case "--capacity": capacity = try number(1...100_000, "requests/s in 1...100000")
        case "--outage": outage = try seconds(1...3600)
        case "--stall": stall = try seconds(1...3600)
        case "--recovery": recovery = try seconds(1...3600)
        case "--brownout": brownout = try number(0...0.99, "a probability in 0...0.99")
        case "--seeds": seedCount = try seconds(1...1000)
        case "--slots": slots = try seconds(1...100_000)
        case "--slots-after": slotsAfter = try seconds(1...100_000)
        case "--change-at": changeAt = try seconds(11...3600)
        case "--overload": overload = try number(1.01...100, "a multiple of capacity in 1.01...100")
        case "--quota-window": quotaWindow = try seconds(1...3600)
        case "--flap":
            let expected = "UP,DOWN: two whole numbers of seconds in 1...3600"
            let parts = value()?.split(separator: ",").compactMap { Int($0) } ?? []
            guard parts.count == 2, parts.allSatisfy({ (1...3600).contains($0) }) else {
                throw ParseError(flag: flag, expected: expected)
            }
            flap = Flap(up: parts[0], down: parts[1])
        case "--preset":
            guard let name = value(), Self.presetNames.contains(name) else {
                throw ParseError(flag: flag, expected: "one of \(Self.presetNames.joined(separator: ", "))")
            }
            preset = name
        default:
            return false
        }
        return true
    }

    /// The flags, for `--help`.
    public static let usage = """
          --rate-per-client R  requests/s one client offers (default 4 server-facing, 0.5 app-facing)
          --offered R          total requests/s all clients offer (default 100)
          --capacity R         server requests/s (default 3 × --offered, 300; the metastable case 300 for 280,
                               the tail and hedging scenarios 60 workers of 35 ms for 100)
          --outage S           seconds of full outage (default 20)
          --stall S            seconds the server stops serving, requests queue (default 10)
          --flap UP,DOWN       repeating outage: seconds up, seconds down (default 5,5 in the flap scenario)
          --brownout P         failure probability (default: 0.05, 0.1, 0.2, 0.3, 0.5, 0.7; the flap scenario 0.2)
          --recovery S         seconds measured after a fault ends (default 60, the metastable case 40; 20 with
                               --quick)
          --seeds N            how many seeds from --seed (default 20; 2 with --quick)
          --slots N            the server's concurrent slots (adaptive, priority; default 100)
          --slots-after N      the server's slots after --change-at (adaptive; default 40)
          --change-at S        when the slots change, in seconds (adaptive; default 60, at least 11)
          --overload X         offered load as a multiple of capacity (adaptive, priority; default 2)
          --quota-window S     seconds in one window of the server's advertised quota (quota; default 10,
                               a run of at least 3 windows)
          --preset NAME        run only this preset or tuned row besides the baselines:
                               \(presetNames.joined(separator: ", "))
        """
}
