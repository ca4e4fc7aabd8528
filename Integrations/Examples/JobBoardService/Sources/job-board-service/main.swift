// `swift run job-board-service [--port N] [--chaos P] [--seed N]`: the job board as a Hummingbird server on
// 127.0.0.1 (GET /, /jobs, /metrics, /health), its sources on an embedded loopback FaultServer.
import Foundation
import Hummingbird
import JobBoardService
import Logging

var configuration = JobBoardServiceConfiguration()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--port": configuration.port = arguments.next().flatMap(Int.init) ?? configuration.port
    case "--seed": configuration.seed = arguments.next().flatMap(UInt64.init) ?? configuration.seed
    case "--chaos": configuration.chaos = arguments.next().flatMap(Double.init) ?? configuration.chaos
    default:
        FileHandle.standardError.write(Data("usage: job-board-service [--port N] [--seed N] [--chaos P]\n".utf8))
        exit(2)
    }
}

let logger = {
    var logger = Logger(label: "job-board-service")
    logger.logLevel = .info
    return logger
}()
let settings = configuration
let service = try JobBoardService(configuration: settings, logger: logger)
let application = service.makeApplication { port in
    logger.info("serving the job board on http://\(settings.host):\(port)/")
}
try await application.runService()
try await service.shutdown()
