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

    @Test(
        "Rejects malformed input with a line number, never crashing",
        arguments: ["\"a\" = \"x\"", "\"a\" \"x\";", "\"a\" = \"x", "/* open", "= \"x\";", "\"a\" = \"\\U12\";"])
    func rejects(text: String) {
        #expect(throws: StringsFileParser.ParseError.self) { try StringsFileParser.parse(text) }
    }
}
