import Foundation
import ResilienceCore
import ResilienceTransport

// `connectivity-probe [--changes N]`: prints the network path this process sees, then one line per change
// (`path: satisfied [eth0]`), until N changes were printed (default: until stopped). The connectivity tests
// run it inside a network namespace and take an interface down and up around it.

var changes = Int.max
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--changes":
        guard let value = arguments.popFirst(), let count = Int(value), count >= 0 else {
            FileHandle.standardError.write(Data("--changes needs a whole number\n".utf8))
            exit(2)
        }
        changes = count
    default:
        FileHandle.standardError.write(Data("usage: connectivity-probe [--changes N]\n".utf8))
        exit(2)
    }
}

#if os(Linux)
let monitor: any ConnectivityMonitor
do {
    monitor = try NetlinkConnectivityMonitor()
} catch {
    FileHandle.standardError.write(Data("cannot watch the network: \(error)\n".utf8))
    exit(1)
}
#elseif canImport(Network)
let monitor: any ConnectivityMonitor = PathMonitorConnectivity()
#else
FileHandle.standardError.write(Data("no connectivity monitor on this platform\n".utf8))
exit(1)
#endif

var printed = -1
for await path in monitor.paths() {
    FileHandle.standardOutput.write(Data("path: \(path)\n".utf8))
    printed += 1
    if printed >= changes { break }
}
