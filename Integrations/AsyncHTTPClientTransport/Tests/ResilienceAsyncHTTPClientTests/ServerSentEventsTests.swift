import Foundation
import ResilienceCore
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// A body that throws once after its first chunk, then would go on yielding.
private struct FailingOnce: AsyncSequence, Sendable {
    typealias Element = Data
    struct Broken: Error {}

    func makeAsyncIterator() -> Iterator { Iterator() }

    struct Iterator: AsyncIteratorProtocol {
        var calls = 0
        mutating func next() async throws -> Data? {
            calls += 1
            if calls == 2 { throw Broken() }
            return Data("data: \(calls)\n\n".utf8)
        }
    }
}

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

/// A body that sends `total` bytes of `x` in 64 KB chunks, with no line terminator, counting what was read.
private struct EndlessLine: AsyncSequence, Sendable {
    typealias Element = Data
    let total: Int
    let read: LockedState<Int>

    func makeAsyncIterator() -> Iterator { Iterator(total: total, read: read) }

    struct Iterator: AsyncIteratorProtocol {
        let total: Int
        let read: LockedState<Int>
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 64 * 1024)

        mutating func next() async throws -> Data? {
            let chunk = chunk
            let total = total
            return read.withLock { read -> Data? in
                guard read < total else { return nil }
                read += chunk.count
                return chunk
            }
        }
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

    @Test("A retry field takes effect without an event of its own and holds for the events after it, like the id")
    func reconnectionTime() async throws {
        // Servers commonly send `retry:` alone; the block has no data, so no event, but the time still counts.
        let alone = try await events(Chunks(["retry: 5000\n\n", "data: a\n\n", "data: b\n\n"]))
        #expect(
            alone == [
                ServerSentEvent(data: "a", retry: .milliseconds(5000)),
                ServerSentEvent(data: "b", retry: .milliseconds(5000)),
            ])
        let replaced = try await events(Chunks(["retry: 100\ndata: a\n\nretry: 200\n\ndata: b\n\n"]))
        #expect(
            replaced == [
                ServerSentEvent(data: "a", retry: .milliseconds(100)),
                ServerSentEvent(data: "b", retry: .milliseconds(200)),
            ])
    }

    @Test("A retry value that is not only ASCII digits is ignored; one too large for Int64 is the longest time")
    func reconnectionTimeValues() async throws {
        for garbage in ["-1", "1.5", "5s", "  5", "", "\u{0661}", "0x10"] {
            let parsed = try await events(Chunks(["retry: 300\n\nretry:\(garbage)\ndata: a\n\n"]))
            #expect(parsed == [ServerSentEvent(data: "a", retry: .milliseconds(300))], "retry:\(garbage)")
        }
        let huge = try await events(Chunks(["retry: 99999999999999999999999999\ndata: a\n\n"]))
        #expect(huge == [ServerSentEvent(data: "a", retry: .milliseconds(Int64.max))])
    }

    @Test("A long line arriving in small chunks is searched once, not again from its start with every chunk")
    func longLineSearchedOnce() async throws {
        let size = 1 << 20
        var chunks = [Data("data: ".utf8)]
        for _ in 0..<(size / 1024) { chunks.append(Data(repeating: UInt8(ascii: "x"), count: 1024)) }
        chunks.append(Data("\n\n".utf8))
        var iterator = ServerSentEvents(Chunks(chunks)).makeAsyncIterator()
        let event = try await iterator.next()
        #expect(event?.data.utf8.count == size)
        #expect(try await iterator.next() == nil)
        // Every byte is searched at most once; searching the whole line again per chunk would be about 512 MB.
        let total = chunks.reduce(0) { $0 + $1.count }
        #expect(iterator.examinedBytes <= total, "examined \(iterator.examinedBytes) bytes of \(total)")
    }

    @Test("A 100 MB line without a terminator fails with a typed error once it outgrows the cap, reading no further")
    func endlessLine() async throws {
        let read = LockedState(initialState: 0)
        var iterator = ServerSentEvents(EndlessLine(total: 100 * 1024 * 1024, read: read)).makeAsyncIterator()
        let error = await #expect(throws: TransportError.self) { _ = try await iterator.next() }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
        let bytesRead: Int = read.withLock { $0 }
        let bound: Int = 10 * 1024 * 1024 + 64 * 1024
        #expect(bytesRead <= bound, "read \(bytesRead) bytes")
        #expect(try await iterator.next() == nil)
    }

    @Test("Small events adding up to more than the cap all arrive: the cap bounds one event, not the stream")
    func manySmallEvents() async throws {
        let event = Data(("data: " + String(repeating: "y", count: 1000) + "\n\n").utf8)
        let chunks = Chunks(Array(repeating: event, count: 11 * 1024))
        var count = 0
        for try await _ in ServerSentEvents(chunks) { count += 1 }
        #expect(count == 11 * 1024)
    }

    @Test("An event whose data outgrows the limit fails, whether it comes in one chunk or line by line")
    func eventOverLimit() async throws {
        let whole = Chunks(["data: small\n\n", "data: " + String(repeating: "z", count: 1500) + "\n\ndata: after\n\n"])
        let lineByLine = Chunks(
            ["data: small\n\n"] + Array(repeating: "data: " + String(repeating: "z", count: 99) + "\n", count: 20))
        for chunks in [whole, lineByLine] {
            var iterator = ServerSentEvents(chunks, maximumEventSize: 1000).makeAsyncIterator()
            #expect(try await iterator.next() == ServerSentEvent(data: "small"))
            let error = await #expect(throws: TransportError.self) { _ = try await iterator.next() }
            #expect(error?.code == .responseTooLarge)
            #expect(error?.classification.message == "a server-sent event exceeded the 1000-byte limit")
            #expect(try await iterator.next() == nil)
        }
    }

    @Test("After the body throws, the events end: asking again reads no more of the body")
    func endsAfterFailure() async throws {
        var iterator = ServerSentEvents(FailingOnce()).makeAsyncIterator()
        #expect(try await iterator.next() == ServerSentEvent(data: "1"))
        await #expect(throws: FailingOnce.Broken.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }
}
