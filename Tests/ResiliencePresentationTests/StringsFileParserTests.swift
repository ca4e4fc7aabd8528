import ResiliencePresentation
import Testing

@Suite("StringsFileParser")
struct StringsFileParserTests {
    @Test("Parses keys, values, comments and escapes")
    func parses() throws {
        let text = """
            /* a block
               comment */
            "a" = "one";   // trailing comment
            "b.c" = "say \\"hi\\"\\nnext";
            "u" = "\\U00E9t\\u00E9";
            bare = "unquoted key";
            "a" = "later wins";
            """
        let table = try StringsFileParser.parse(text)
        #expect(table == ["a": "later wins", "b.c": "say \"hi\"\nnext", "u": "été", "bare": "unquoted key"])
    }

    @Test("A scalar beyond U+FFFF written as a surrogate pair of escapes, as Foundation writes it, is one scalar")
    func surrogatePairEscape() throws {
        let table = try StringsFileParser.parse(#""smile" = "\UD83D\UDE00 \ud83d\ude0a";"#)
        #expect(table == ["smile": "\u{1F600} \u{1F60A}"])
    }

    @Test(
        "Rejects malformed input with a line number, never crashing",
        arguments: [
            "\"a\" = \"x\"", "\"a\" \"x\";", "\"a\" = \"x", "/* open", "= \"x\";", "\"a\" = \"\\U12\";",
            #""a" = "\UD83D";"#, #""a" = "\UD83Dx";"#, #""a" = "\UD83D\U0041";"#, #""a" = "\UDE00";"#,
            #""a" = "\U١٢٣٤";"#,
        ])
    func rejects(text: String) {
        #expect(throws: StringsFileParser.ParseError.self) { try StringsFileParser.parse(text) }
    }
}
