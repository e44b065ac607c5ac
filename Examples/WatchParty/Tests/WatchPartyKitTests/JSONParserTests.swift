import Testing

@testable import WatchPartyKit

/// The position-tracking JSON parser under the scene reader.
@Suite struct JSONParserTests {
    @Test func valuesKeepTheirPositions() throws {
        let root = try JSONParser.parse(
            "{\n  \"a\": [1, -2.5e1, true, null],\n  \"é\": \"x\\u00e9\\n\\ud83c\\udfac\"\n}")
        guard case .object(let members) = root.value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["a", "é"])
        #expect(members[0].keyPosition == SourcePosition(line: 2, column: 3))
        guard case .array(let elements) = members[0].value.value else {
            Issue.record("not an array")
            return
        }
        #expect(elements.map(\.position.column) == [9, 12, 20, 26])
        if case .number(let number) = elements[1].value { #expect(number == -25) } else { Issue.record("not -25") }
        // Columns count characters: "é" is two bytes.
        #expect(members[1].value.position == SourcePosition(line: 3, column: 8))
        if case .string(let text) = members[1].value.value {
            #expect(text == "xé\n🎬")
        } else {
            Issue.record("text")
        }
    }

    @Test func windowsLineEndingsAndAByteOrderMarkKeepPositionsRight() {
        do {
            _ = try JSONParser.parse("\u{FEFF}{\r\n  \"a\": 1,\r\n  \"b\": x\r\n}")
            Issue.record("a bare x parsed")
        } catch {
            #expect(error.position == SourcePosition(line: 3, column: 8))
        }
    }

    @Test(arguments: [
        ("", 1, 1, "a value"),
        ("{\"a\": }", 1, 7, "a value (an object, array, string, number, true, false or null)"),
        ("[1,\n 2,\n 03]", 3, 3, "',' or ']' after an array element"),
        ("{\"a\": 1} x", 1, 10, "the end of the file after the top-level value"),
        ("[1.]", 1, 4, "a digit after the decimal point"),
        ("[\"\\q\"]", 1, 4, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\'"),
        ("{\"a\" 1}", 1, 6, "':' after the key \"a\""),
    ])
    func malformedTextIsPlaced(text: String, line: Int, column: Int, expected: String) {
        do {
            _ = try JSONParser.parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.position == SourcePosition(line: line, column: column))
            #expect(error.expected == expected)
        }
    }
}
