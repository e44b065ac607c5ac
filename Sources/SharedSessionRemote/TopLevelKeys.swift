/// The keys of a JSON object line, read without decoding their values: what a unit needs to know that
/// a host line is an event nobody listens to (`{"event": …}` and nothing else), at a fraction of a full
/// decode. With a thousand units in one process, each event of the session is a line for each of them,
/// and decoding every one with `JSONDecoder` slowed every unit's round trip (BENCHMARKS.md has the
/// round trip of one unit among a thousand).
///
/// The scan follows JSON's structure (strings with their escapes, nested objects and arrays), so a key
/// is told by its place in the line, never by bytes that happen to look like one; it does not check
/// numbers and literals, which the full decode of any line that is not an unread event still does.
/// It reads the line where it lies when its bytes are contiguous (a `ByteBuffer`'s are), and
/// ``isOnly(_:in:)`` allocates nothing: a unit with a thousand siblings pays for it on every line.
enum TopLevelKeys {
    /// The object's keys in order, or nil if `line` is not one JSON object (unbalanced, a string left
    /// open, something after its end).
    static func of(_ line: some Collection<UInt8>) -> [String]? {
        withBytes(of: line) { bytes in
            var keys: [String] = []
            var scanner = Scanner(bytes: bytes)
            let whole = scanner.object { key in
                keys.append(String(decoding: bytes[key], as: UTF8.self))
                return true
            }
            return whole ? keys : nil
        }
    }

    /// Whether `line` is one JSON object whose one key is `key` (written without escapes): what
    /// ``of(_:)`` `== [key]` says, read without a copy of the line and without allocating.
    static func isOnly(_ key: StaticString, in line: some Collection<UInt8>) -> Bool {
        withBytes(of: line) { bytes in
            let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            var count = 0
            var scanner = Scanner(bytes: bytes)
            // A second key is enough to say no: the rest of the line need not be scanned.
            let whole = scanner.object { found in
                count += 1
                return count == 1 && bytes[found].elementsEqual(name)
            }
            return whole && count == 1
        }
    }

    /// Calls `body` with the line's bytes: in place when they are contiguous, else copied.
    private static func withBytes<Result>(
        of line: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        if let result = line.withContiguousStorageIfAvailable(body) { return result }
        return Array(line).withUnsafeBufferPointer(body)
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        /// Reads one object, handing `visit` each key's bytes (between its quotes, escapes as written)
        /// in order. Returns whether the line is one whole object and `visit` took every key; false as
        /// soon as `visit` says no.
        mutating func object(_ visit: (Range<Int>) -> Bool) -> Bool {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if take(UInt8(ascii: "}")) { return atEnd() }
            while true {
                skipSpace()
                guard let key = string(), visit(key) else { return false }
                skipSpace()
                guard take(UInt8(ascii: ":")), skipValue() else { return false }
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return false }
                return atEnd()
            }
        }

        /// The bytes of a string at `index`, between its quotes (keys here are plain ASCII names).
        mutating func string() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    defer { index += 1 }
                    return start..<index
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
