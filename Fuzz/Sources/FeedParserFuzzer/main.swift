import Foundation
import ResilienceSources

/// libFuzzer entry point: any bytes through the whole feed pipeline (charset detection, entity rewrite,
/// XML parsing, item building). The first byte picks a `Content-Type` charset so the header path is covered.
@_cdecl("LLVMFuzzerTestOneInput")
public func feedParserFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    guard let selector = bytes.first else { return 0 }
    let charsets = [nil, "utf-8", "iso-8859-1", "utf-16", "windows-1251", "koi8-r", "ibm437", "bogus"]
    let contentType = charsets[Int(selector) % charsets.count].map { "application/rss+xml; charset=\($0)" }
    let data = Data(bytes.dropFirst())
    let parser = FeedParser(configuration: .init(maximumBytes: 1 << 20))
    if let document = try? parser.parseDocument(
        data, source: "fuzz", contentType: contentType, documentURL: URL(string: "https://fuzz.example/feed"))
    {
        for item in document.items where item.title.lowercased().contains("<script") {
            fatalError("script markup in a title: \(item.title)")
        }
    }
    return 0
}
