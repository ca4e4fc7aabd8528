import Foundation
import Testing

/// The `fault-server` executable: a FaultServer in a child process that prints its port on stdout.
@Suite("fault-server CLI")
struct FaultServerCLITests {
    static let executable = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/debug/fault-server")

    @Test(
        "It prints its port and serves the standard script from another process",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path), "build fault-server first"))
    func childProcess() async throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--lifetime", "20"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { process.terminate() }
        let line = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var bytes = Data()
                while let byte = try? output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty,
                    byte != Data("\n".utf8)
                {
                    bytes.append(byte)
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
        let port = try #require(UInt16(line))
        let client = RawHTTPClient(port: port)
        var statuses: [Int?] = []
        for _ in 0..<3 { statuses.append(await client.get("/flaky").statusCode) }
        #expect(statuses == [503, 503, 200])
        #expect(await client.get("/rate-limited").header("Retry-After") == "1")
    }
}
