/// A JSON value that remembers where it stood in its source text.
///
/// Foundation's `JSONDecoder` reports a malformed value by its coding path only, so a person
/// editing a scene file would have to count array elements to find it. This small parser (RFC 8259,
/// nothing more) keeps the line and column of every value and key, which the scene reader puts in
/// its errors.
struct JSONNode: Sendable {
    /// A value, with its members' positions.
    enum Value: Sendable {
        case object([Member])
        case array([JSONNode])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    /// An object's member: the key where it was written, and its value.
    struct Member: Sendable {
        let key: String
        let keyPosition: SourcePosition
        let value: JSONNode
    }

    let value: Value
    let position: SourcePosition

    /// What the value is, in the words an error uses: "a string", "an object".
    var kindDescription: String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .string(let text): "the string \"\(text)\""
        case .number(let number): "the number \(JSONNode.format(number))"
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        }
    }

    static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}

/// A line and column in a source text, both from 1.
struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    let line: Int
    let column: Int

    var description: String { "line \(line), column \(column)" }
}

/// A JSON text that does not parse: where, and what was expected there.
struct JSONSyntaxError: Error, Sendable {
    let position: SourcePosition
    let expected: String
    let found: String
}

/// Parses JSON text into ``JSONNode``s, tracking lines and columns.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    /// Nesting deeper than this is refused rather than risking the stack on a hostile file.
    private static let maximumDepth = 256

    init(_ text: String) {
        bytes = Array(text.utf8)
        // A byte-order mark, as some editors write, is not part of the JSON.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
    }

    /// Parses the whole text as one JSON value.
    static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(text)
        parser.skipWhitespace()
        let root = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw parser.error(expected: "the end of the file after the top-level value")
        }
        return root
    }

    private var position: SourcePosition {
        // Columns count characters, not bytes: count the UTF-8 lead bytes since the line began.
        let column = bytes[lineStart..<index].count { $0 & 0xC0 != 0x80 } + 1
        return SourcePosition(line: line, column: column)
    }

    private func error(expected: String) -> JSONSyntaxError {
        JSONSyntaxError(position: position, expected: expected, found: foundDescription)
    }

    private var foundDescription: String {
        guard index < bytes.count else { return "the end of the file" }
        var end = index
        while end < bytes.count, end - index < 12, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
        let text = String(decoding: bytes[index..<end], as: UTF8.self)
        return "'\(text)'"
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D:
                index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        guard depth < Self.maximumDepth else {
            throw error(expected: "at most \(Self.maximumDepth) levels of nesting")
        }
        let start = position
        guard index < bytes.count else { throw error(expected: "a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return JSONNode(value: .object(try parseObject(depth: depth)), position: start)
        case UInt8(ascii: "["):
            return JSONNode(value: .array(try parseArray(depth: depth)), position: start)
        case UInt8(ascii: "\""):
            return JSONNode(value: .string(try parseString()), position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(value: .number(try parseNumber()), position: start)
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return JSONNode(value: .bool(true), position: start)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return JSONNode(value: .bool(false), position: start)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return JSONNode(value: .null, position: start)
        default:
            throw error(expected: "a value (an object, array, string, number, true, false or null)")
        }
    }

    private mutating func parseLiteral(_ literal: String) throws(JSONSyntaxError) {
        let expected = Array(literal.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error(expected: "a value (an object, array, string, number, true, false or null)")
        }
        index += expected.count
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> [JSONNode.Member] {
        index += 1
        var members: [JSONNode.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error(expected: members.isEmpty ? "a key in double quotes or '}'" : "a key in double quotes")
            }
            let keyPosition = position
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error(expected: "':' after the key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            members.append(JSONNode.Member(key: key, keyPosition: keyPosition, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw error(expected: "',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            throw error(expected: "',' or '}' after the value of \"\(key)\"")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> [JSONNode] {
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error(expected: "',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            throw error(expected: "',' or ']' after an array element")
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ bytes: ArraySlice<UInt8>) {
            scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                flush(bytes[run..<index])
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(bytes[run..<index])
                index += 1
                guard index < bytes.count else { throw error(expected: "an escape after '\\'") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800..<0xDC00).contains(code), bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error(expected: "a low surrogate (\\uDC00 to \\uDFFF) after a high one")
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else {
                        throw error(expected: "a valid \\u escape (a lone surrogate is not one)")
                    }
                    scalars.append(scalar)
                default:
                    index -= 1
                    throw error(expected: "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\'")
                }
                run = index
            case 0x00..<0x20:
                throw error(expected: "a closing '\"' (a string cannot span lines; write \\n)")
            default:
                index += 1
            }
        }
        throw error(expected: "a closing '\"'")
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error(expected: "four hex digits after \\u") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error(expected: "four hex digits after \\u")
            }
            code = code << 4 | digit
            index += 1
        }
        return code
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            let before = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - before
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
            throw error(expected: "a digit")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            _ = digits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error(expected: "a digit after the decimal point") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw error(expected: "a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let number = Double(text), number.isFinite else {
            index = start
            throw error(expected: "a number within the range of a double")
        }
        return number
    }
}
