import Foundation
import ResilienceAsyncHTTPClient
import Testing

/// A body that yields the given chunks, then ends.
private struct Chunks: AsyncSequence, Sendable {
    typealias Element = Data
    let chunks: [Data]

    init(_ chunks: [Data]) { self.chunks = chunks }
    init(_ strings: [String]) { self.chunks = strings.map { Data($0.utf8) } }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks[...]) }

    struct Iterator: AsyncIteratorProtocol {
        var chunks: ArraySlice<Data>
        mutating func next() async throws -> Data? { chunks.popFirst() }
    }
}

private func events(_ chunks: Chunks) async throws -> [ServerSentEvent] {
    var received: [ServerSentEvent] = []
    for try await event in ServerSentEvents(chunks) { received.append(event) }
    return received
}

@Suite("ServerSentEvents parsing")
struct ServerSentEventsTests {
    @Test("A leading byte order mark is ignored, even split across chunks; only the first one")
    func byteOrderMark() async throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let whole = try await events(Chunks([Data(bom + Array("data: first\n\n".utf8))]))
        #expect(whole == [ServerSentEvent(data: "first")])

        let split = try await events(
            Chunks([Data(bom.prefix(1)), Data(bom.dropFirst() + Array("data: first\n\n".utf8))]))
        #expect(split == [ServerSentEvent(data: "first")])

        // A second mark is not a byte order mark: the field name it starts is unknown, so that line is skipped.
        let twice = try await events(Chunks([Data(bom + bom + Array("data: x\n\ndata: y\n\n".utf8))]))
        #expect(twice == [ServerSentEvent(data: "y")])
    }
}
