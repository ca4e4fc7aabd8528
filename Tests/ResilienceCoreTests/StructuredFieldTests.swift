import ResilienceCore
import Testing

@Suite("RFC 9651 structured fields")
struct StructuredFieldTests {
    @Test("A dictionary with every bare item type parses and serialises back")
    func everyBareItemType() throws {
        let field =
            #"i=-42, d=1.5;u=?0, s="a \"q\" \\", t=*tok/en:x, b=:aGVsbG8=:, f, n=?0, at=@1659578233, ds=%"f%c3%bc", l=(1 "x");k"#
        let dictionary = try StructuredFieldDictionary(parsing: field)
        #expect(dictionary.count == 10)
        #expect(dictionary["i"] == .item(.init(.integer(-42))))
        #expect(
            dictionary["d"] == .item(.init(.decimal(.init(thousandths: 1_500)), parameters: ["u": .boolean(false)])))
        #expect(dictionary["s"]?.item?.bareItem == .string(#"a "q" \"#))
        #expect(dictionary["t"]?.item?.bareItem == .token("*tok/en:x"))
        #expect(dictionary["b"]?.item?.bareItem == .byteSequence(Array("hello".utf8)))
        #expect(dictionary["f"]?.item?.bareItem == .boolean(true))
        #expect(dictionary["at"]?.item?.bareItem == .date(1_659_578_233))
        #expect(dictionary["ds"]?.item?.bareItem == .displayString("fü"))
        #expect(
            dictionary["l"]
                == .innerList(.init([.init(.integer(1)), .init(.string("x"))], parameters: ["k": .boolean(true)])))
        #expect(try dictionary.serialized() == field)
        #expect(try StructuredFieldDictionary(parsing: dictionary.serialized()) == dictionary)
    }

    @Test("Errors are typed and say where parsing stopped")
    func errorsCarryPositions() {
        func error(_ parse: () throws -> Void) -> StructuredFieldError? {
            do {
                try parse()
                return nil
            } catch { return error as? StructuredFieldError ?? StructuredFieldError(.init(rawValue: "other")) }
        }
        #expect(error { _ = try StructuredFieldItem(parsing: "") } == StructuredFieldError(.unexpectedEnd, offset: 0))
        #expect(error { _ = try StructuredFieldList(parsing: "a, b,") } == .init(.unexpectedEnd, offset: 5))
        #expect(error { _ = try StructuredFieldList(parsing: "a b") } == .init(.unexpectedCharacter, offset: 2))
        #expect(error { _ = try StructuredFieldDictionary(parsing: "a=1, B=2") } == .init(.invalidKey, offset: 5))
        #expect(error { _ = try StructuredFieldItem(parsing: "1234567890123456") }?.code == .invalidNumber)
        #expect(error { _ = try StructuredFieldItem(parsing: "1234567890123.5") }?.code == .invalidNumber)
        #expect(error { _ = try StructuredFieldItem(parsing: "1.2345") }?.code == .invalidNumber)
        #expect(error { _ = try StructuredFieldItem(parsing: "\"ü\"") } == .init(.invalidString, offset: 1))
        #expect(error { _ = try StructuredFieldItem(parsing: "?2") }?.code == .invalidBoolean)
        #expect(error { _ = try StructuredFieldItem(parsing: "@1.5") }?.code == .invalidDate)
        #expect(error { _ = try StructuredFieldItem(parsing: ":a=b:") }?.code == .invalidByteSequence)
        #expect(error { _ = try StructuredFieldItem(parsing: "%\"%C3%BC\"") }?.code == .invalidDisplayString)
        #expect(error { _ = try StructuredFieldItem(parsing: "1 ") } == nil)
        #expect(error { _ = try StructuredFieldItem(parsing: "1;a=") }?.code == .unexpectedEnd)
        #expect(error { _ = try StructuredFieldList(parsing: "(1") } == .init(.unexpectedEnd, offset: 2))
        #expect(error { _ = try StructuredFieldItem(parsing: "(1)") } == .init(.unexpectedCharacter, offset: 0))
        #expect(
            error { _ = try StructuredFieldItem(.integer(1_000_000_000_000_000)).serialized() }?.code == .outOfRange)
        #expect(error { _ = try StructuredFieldItem(.token("1a")).serialized() }?.code == .invalidToken)
        #expect(error { _ = try StructuredFieldItem(.string("é")).serialized() }?.code == .invalidString)
        #expect(
            error { _ = try StructuredFieldItem(.integer(1), parameters: ["A": .integer(1)]).serialized() }?.code
                == .invalidKey)
        #expect(StructuredFieldError(.invalidKey, offset: 4).description == "invalid-key at byte 4")
    }

    @Test("Decimals keep thousandths exactly and round doubles half to even on their shortest text")
    func decimals() throws {
        #expect(StructuredFieldDecimal(0.0025)?.thousandths == 2)
        #expect(StructuredFieldDecimal(0.0035)?.thousandths == 4)
        #expect(StructuredFieldDecimal(-0.0015)?.thousandths == -2)
        #expect(StructuredFieldDecimal(9.9995)?.description == "10.0")
        #expect(StructuredFieldDecimal(0.00001)?.thousandths == 0)
        #expect(StructuredFieldDecimal(.nan) == nil)
        #expect(StructuredFieldDecimal(1e15) == nil)
        #expect(try StructuredFieldItem(parsing: "-0.5").bareItem == .decimal(.init(thousandths: -500)))
        #expect(try StructuredFieldItem(parsing: "123456789012.123").serialized() == "123456789012.123")
        #expect(try StructuredFieldItem(.decimal(.init(thousandths: 2_000))).serialized() == "2.0")
        #expect(StructuredFieldDecimal(thousandths: 1_250).doubleValue == 1.25)
    }

    @Test("Keys, tokens and strings of 1 to 20 bytes, mid-field and at its end, equal and hash as built strings")
    func shortTextReadsBackExactly() throws {
        for length in 1...20 {
            let key = "k" + String(repeating: "-", count: length - 1)
            let token = "T" + String(repeating: "/", count: length - 1)
            let text = String(repeating: "~", count: length)
            // The first member has more than 15 bytes after each of its texts (read by word loads); the last token
            // has none (read byte by byte, or copied when longer than 15).
            let dictionary = try StructuredFieldDictionary(
                parsing: "\(key)=\(token);\(key)=\"\(text)\", z=\"\(text)\", y=\(token)")
            #expect(dictionary.map(\.key) == [key, "z", "y"])
            #expect(dictionary[key]?.item?.bareItem.stringValue == token)
            #expect(dictionary[key]?.parameters[key]?.stringValue == text)
            #expect(dictionary["z"]?.item?.bareItem.stringValue == text)
            #expect(dictionary["y"]?.item?.bareItem.stringValue == token)
            let parsed = [
                dictionary[0].key, dictionary[key]?.item?.bareItem.stringValue,
                dictionary["y"]?.item?.bareItem.stringValue,
            ]
            for (value, expected) in zip(parsed, [key, token, token]) {
                #expect(value?.hashValue == expected.hashValue)
                #expect(value.map { Array($0.utf8) } == Array(expected.utf8))
                #expect(value.map { $0 + "!" } == expected + "!")
            }
        }
    }

    @Test("Ordered maps: a repeated key keeps its first position and its last value")
    func orderedMaps() throws {
        let dictionary = try StructuredFieldDictionary(parsing: "a=1, b=2, a=3")
        #expect(dictionary.map(\.key) == ["a", "b"])
        #expect(dictionary["a"]?.item?.bareItem == .integer(3))
        var parameters: StructuredFieldParameters = ["x": .integer(1)]
        parameters["y"] = .token("t")
        parameters["x"] = .boolean(true)
        #expect(parameters.map(\.key) == ["x", "y"])
        #expect(try StructuredFieldItem(.integer(0), parameters: parameters).serialized() == "0;x;y=t")
        parameters["x"] = nil
        #expect(parameters.map(\.key) == ["y"])
    }

    @Test("Ordered maps past the scan limit: repeated keys, lookups, removal and equality use the key table")
    func orderedMapsWithManyKeys() throws {
        let count = 40
        let field = (0..<count).map { "k\($0)=\($0)" }.joined(separator: ", ") + ", k3=-3, k39=-39, *x;p=1"
        let parsed = try StructuredFieldDictionary(parsing: field)
        #expect(parsed.count == count + 1)
        #expect(parsed.map(\.key) == (0..<count).map { "k\($0)" } + ["*x"])
        #expect(parsed["k3"]?.item?.bareItem == .integer(-3))
        #expect(parsed["k39"]?.item?.bareItem == .integer(-39))
        #expect(parsed["k40"] == nil)
        var built = StructuredFieldDictionary()
        for index in 0..<count { built["k\(index)"] = .item(StructuredFieldItem(.integer(Int64(index)))) }
        built["k3"] = .item(StructuredFieldItem(.integer(-3)))
        built["k39"] = .item(StructuredFieldItem(.integer(-39)))
        built["*x"] = .item(StructuredFieldItem(.boolean(true), parameters: ["p": .integer(1)]))
        #expect(built == parsed)
        #expect(built.hashValue == parsed.hashValue)
        var removed = parsed
        for index in stride(from: 0, to: count, by: 2) { removed["k\(index)"] = nil }
        #expect(removed.count == count / 2 + 1)
        #expect(removed["k1"]?.item?.bareItem == .integer(1) && removed["k2"] == nil)
        #expect(removed["k39"]?.item?.bareItem == .integer(-39))
        removed["k2"] = .item(StructuredFieldItem(.integer(2)))
        #expect(removed.map(\.key).last == "k2")
        #expect(try StructuredFieldDictionary(parsing: removed.serialized()) == removed)
    }

    @Test("Hostile input: a megabyte field with 110,000 keys parses linearly; a megabyte of garbage is an error")
    func hostileInput() throws {
        let keys = (0..<110_000).map { "k\($0)=\($0 % 7)" }
        let field = keys.joined(separator: ", ")
        #expect(field.utf8.count > 1_000_000)
        let dictionary = try StructuredFieldDictionary(parsing: field)
        #expect(dictionary.count == 110_000)
        #expect(dictionary["k109999"]?.item?.bareItem == .integer(109_999 % 7))
        let repeated = try StructuredFieldDictionary(parsing: String(repeating: "a=1, ", count: 200_000) + "a=2")
        #expect(repeated.count == 1 && repeated["a"]?.item?.bareItem == .integer(2))
        #expect(throws: StructuredFieldError.self) {
            try StructuredFieldList(parsing: String(repeating: "(", count: 1_000_000))
        }
        #expect(throws: StructuredFieldError.self) {
            try StructuredFieldItem(parsing: "\"" + String(repeating: "x", count: 1_000_000))
        }
        let longString = try StructuredFieldItem(parsing: "\"" + String(repeating: "x", count: 1_000_000) + "\"")
        #expect(longString.bareItem.stringValue?.utf8.count == 1_000_000)
    }
}
