import Foundation
import ResilienceSources
import Testing

/// Single-byte code pages FeedParser decodes from its own tables (Foundation on Linux has no converter for
/// them): a few known characters per code page, checked through a whole feed.
@Suite("Feed code pages")
struct FeedCodePageTests {
    let parser = FeedParser()

    /// A feed declaring `encoding` whose title is `titleBytes`, in an ASCII-compatible code page.
    func title(_ titleBytes: [UInt8], encoding: String) throws -> String {
        let feed =
            Data(#"<?xml version="1.0" encoding="\#(encoding)"?><rss><channel><title>"#.utf8) + Data(titleBytes)
            + Data("</title></channel></rss>".utf8)
        return try parser.parseDocument(feed, source: "t").title
    }

    /// The same feed in EBCDIC: its markup is written with the letters, digits and punctuation every EBCDIC
    /// Latin code page shares (A = 0xC1, a = 0x81, 0 = 0xF0, < = 0x4C …), independently of the tables.
    func ebcdicTitle(_ titleBytes: [UInt8], encoding: String) throws -> String {
        func ebcdic(_ text: String) -> Data {
            Data(
                text.utf8.map { byte -> UInt8 in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "i"): 0x81 + (byte - UInt8(ascii: "a"))
                    case UInt8(ascii: "j")...UInt8(ascii: "r"): 0x91 + (byte - UInt8(ascii: "j"))
                    case UInt8(ascii: "s")...UInt8(ascii: "z"): 0xA2 + (byte - UInt8(ascii: "s"))
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): 0xF0 + (byte - UInt8(ascii: "0"))
                    case UInt8(ascii: " "): 0x40
                    case UInt8(ascii: "."): 0x4B
                    case UInt8(ascii: "<"): 0x4C
                    case UInt8(ascii: "-"): 0x60
                    case UInt8(ascii: "/"): 0x61
                    case UInt8(ascii: "_"): 0x6D
                    case UInt8(ascii: ">"): 0x6E
                    case UInt8(ascii: "?"): 0x6F
                    case UInt8(ascii: "="): 0x7E
                    case UInt8(ascii: "\""): 0x7F
                    default: 0x3F  // EBCDIC SUB: the skeleton below uses none
                    }
                })
        }
        let feed =
            ebcdic(#"<?xml version="1.0" encoding="\#(encoding)"?><rss><channel><title>"#) + Data(titleBytes)
            + ebcdic("</title></channel></rss>")
        return try parser.parseDocument(feed, source: "t").title
    }

    @Test("EBCDIC 500, 875 and 1140 by their labels: 0xC1 is A, and each code page's own characters")
    func ebcdic() throws {
        #expect(try ebcdicTitle([0xC1, 0x81, 0xF1], encoding: "cp500") == "Aa1")
        #expect(try ebcdicTitle([0x4A, 0x5A], encoding: "ibm500") == "[]")
        #expect(try ebcdicTitle([0x4A, 0x5A], encoding: "ebcdic-cp-be") == "[]")
        #expect(try ebcdicTitle([0x4A, 0x5A], encoding: "ebcdic_cp_ch") == "[]")
        #expect(try ebcdicTitle([0xC1, 0x41, 0x42, 0x71], encoding: "cp875") == "AΑΒΆ")
        #expect(try ebcdicTitle([0xC1, 0x9F], encoding: "ibm1140") == "A€")
        #expect(try ebcdicTitle([0x4A, 0x5A, 0x9F], encoding: "cp037") == "¢!¤")
        #expect(try ebcdicTitle([0x4A, 0x9F], encoding: "cp1140") == "¢€")
    }

    @Test("IBM 856 and 1125, KOI8-T and the Mac Icelandic, Croatian, Romanian and Arabic code pages (869 beside)")
    func asciiCompatible() throws {
        #expect(try title([0x80, 0x9A], encoding: "cp856") == "את")
        #expect(try title([0x86, 0xD6], encoding: "cp869") == "Άα")
        #expect(try title([0x80, 0xF2, 0xF4], encoding: "cp1125") == "АҐЄ")
        #expect(try title([0x80, 0xC1, 0x83], encoding: "koi8-t") == "қаҒ")
        #expect(try title([0x80, 0xA0, 0xDC, 0xDF], encoding: "maciceland") == "ÄÝÐþ")
        #expect(try title([0xA0, 0xDC], encoding: "x-mac-icelandic") == "ÝÐ")
        #expect(try title([0xA9, 0xE8], encoding: "x-mac-croatian") == "Šč")
        #expect(try title([0xAE, 0xAF], encoding: "x-mac-romanian") == "ĂȘ")
        #expect(try title([0xC7, 0xE1], encoding: "x-mac-arabic") == "اف")
    }

    @Test("A byte the declared code page leaves undefined is an unsupported-encoding error naming it")
    func undefinedByte() throws {
        do {
            _ = try title([0x9B], encoding: "cp856")
            Issue.record("an undefined cp856 byte was read")
        } catch let error as FeedError {
            #expect(error.code == .unsupportedEncoding)
            #expect(error.detail.contains("cp856"))
        }
    }
}
