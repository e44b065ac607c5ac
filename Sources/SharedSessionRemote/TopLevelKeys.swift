/// The keys of a JSON object line, read without decoding their values: what a unit needs to know that
/// a host line is an event nobody listens to (`{"event": …}` and nothing else), at a fraction of a full
/// decode. With a thousand units in one process, each event of the session is a line for each of them,
/// and decoding every one with `JSONDecoder` took 13 µs a line more than this scan.
///
/// The scan follows JSON's structure (strings with their escapes, nested objects and arrays), so a key
/// is told by its place in the line, never by bytes that happen to look like one; it does not check
/// numbers and literals, which the full decode of any line that is not an unread event still does.
enum TopLevelKeys {
    /// The object's keys in order, or nil if `line` is not one JSON object (unbalanced, a string left
    /// open, something after its end).
    static func of(_ line: some Collection<UInt8>) -> [String]? {
        var scanner = Scanner(bytes: Array(line))
        return scanner.object()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func object() -> [String]? {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var keys: [String] = []
            skipSpace()
            if take(UInt8(ascii: "}")) { return atEnd() ? keys : nil }
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                keys.append(key)
                skipSpace()
                guard take(UInt8(ascii: ":")), skipValue() else { return nil }
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                return atEnd() ? keys : nil
            }
        }

        /// A string at `index`, its escapes kept as written (keys here are plain ASCII names).
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    defer { index += 1 }
                    return String(decoding: bytes[start..<index], as: UTF8.self)
                default: index += 1
                }
            }
            return nil
        }

        /// Skips one value: a string, or anything up to the `,` or `}` that ends it at this depth.
        mutating func skipValue() -> Bool {
            skipSpace()
            var depth = 0
            var any = false
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    any = true
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return any }
                    depth -= 1
                case UInt8(ascii: ","): if depth == 0 { return any }
                default: break
                }
                any = true
                index += 1
            }
            return false
        }

        mutating func skipSpace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D
            {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func atEnd() -> Bool {
            skipSpace()
            return index == bytes.count
        }
    }
}
