import Foundation
import ResilienceSources

/// libFuzzer entry point: any bytes as a date string. Checks that a parsed date always has a sane instant
/// and that parsing is deterministic.
@_cdecl("LLVMFuzzerTestOneInput")
public func feedDateFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let first = FeedDateParser.interpret(text)
    if first != FeedDateParser.interpret(text) { fatalError("non-deterministic date parse") }
    if let date = first.date {
        let seconds = date.timeIntervalSince1970
        // Years 1…9999 with offsets of at most a day.
        if !(seconds > -62_135_683_200 && seconds < 253_402_387_200) { fatalError("instant out of range: \(seconds)") }
    }
    return 0
}
