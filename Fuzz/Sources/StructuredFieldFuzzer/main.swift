import ResilienceCore

/// Feeds arbitrary bytes to the RFC 9651 parsers: the first byte picks the field type (item, list or
/// dictionary), the rest is the field value. Parsing must never crash; whatever parses must serialise, and
/// the serialisation must parse back to the same value and serialise to the same text (canonical form).
@_cdecl("LLVMFuzzerTestOneInput")
public func structuredFieldFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    switch bytes[0] % 3 {
    case 0:
        if let item = try? StructuredFieldItem(parsing: text) {
            let serialized = try! item.serialized()
            let reparsed = try! StructuredFieldItem(parsing: serialized)
            precondition(reparsed == item && (try! reparsed.serialized()) == serialized)
        }
    case 1:
        if let list = try? StructuredFieldList(parsing: text) {
            let serialized = try! list.serialized()
            let reparsed = try! StructuredFieldList(parsing: serialized)
            precondition(reparsed == list && (try! reparsed.serialized()) == serialized)
        }
    default:
        if let dictionary = try? StructuredFieldDictionary(parsing: text) {
            let serialized = try! dictionary.serialized()
            let reparsed = try! StructuredFieldDictionary(parsing: serialized)
            precondition(reparsed == dictionary && (try! reparsed.serialized()) == serialized)
        }
    }
    return 0
}
