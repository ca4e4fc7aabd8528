/// The command line of `job-board`.
struct DemoOptions: Sendable {
    var rounds = 4
    var seed: UInt64 = 42
    var chaos = 0.25
    var json = false
    var noColor = false
    var describe = false
    /// The round in which the simulated device loses its network (nil: never).
    var offlineAt: Int?
    /// How long the network stays away.
    var offlineFor: Duration = .seconds(2)
    /// How long the embedded FaultServer serves (a long-running server sets more).
    var serverLifetime: Duration = .seconds(120)

    static let usage = """
        usage: job-board [--rounds N] [--seed N] [--chaos P] [--offline-at N [--offline-for S]] [--json] [--no-color]
                         [--describe]
          --rounds N   refresh rounds (1...20, default 4)
          --seed N     seed for the server's chaos and the pipelines' jitter (default 42)
          --chaos P    probability (0...0.9) of a TCP reset or 503 on the healthy boards (default 0.25; 0 = calm)
          --offline-at N   the device loses its network at the start of round N and gets it back after
                       --offline-for seconds (0.5...5, default 2): the pipelines wait for the path instead of
                       spending retries, and the view says only what is true while offline
          --json       print only a machine-readable summary on stdout
          --no-color   no ANSI colours or cursor movement (also honours NO_COLOR)
          --describe   print the composition root's configuration (sources, stages, settings) and exit
        """

    /// Parses `arguments` (without the program name); throws a message for bad input.
    static func parse(_ arguments: [String]) throws(UsageError) -> DemoOptions {
        var options = DemoOptions()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rounds":
                guard let value = iterator.next().flatMap(Int.init), (1...20).contains(value) else {
                    throw UsageError("--rounds needs a number from 1 to 20")
                }
                options.rounds = value
            case "--seed":
                guard let value = iterator.next().flatMap({ UInt64($0) }) else {
                    throw UsageError("--seed needs a non-negative integer")
                }
                options.seed = value
            case "--chaos":
                guard let value = iterator.next().flatMap(Double.init), (0...0.9).contains(value) else {
                    throw UsageError("--chaos needs a probability from 0 to 0.9")
                }
                options.chaos = value
            case "--offline-at":
                guard let value = iterator.next().flatMap(Int.init), value >= 1 else {
                    throw UsageError("--offline-at needs a round number from 1")
                }
                options.offlineAt = value
            case "--offline-for":
                guard let value = iterator.next().flatMap(Double.init), (0.5...5).contains(value) else {
                    throw UsageError("--offline-for needs seconds from 0.5 to 5")
                }
                options.offlineFor = .milliseconds(Int(value * 1000))
            case "--json": options.json = true
            case "--no-color": options.noColor = true
            case "--describe": options.describe = true
            case "--help", "-h": throw UsageError(nil)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
        if let round = options.offlineAt, round > options.rounds {
            throw UsageError("--offline-at \(round) is after the last round (\(options.rounds))")
        }
        return options
    }
}

/// A bad command line: the message (nil for `--help`) and the usage.
struct UsageError: Error {
    var message: String?
    init(_ message: String?) { self.message = message }
}
