/// Parent processes, from `/proc/PID/stat`.
enum ProcessTree {
    /// The parent of `pid`, its parent and so on, up to (not including) 1; empty if unknown.
    static func ancestors(of pid: Int32) -> [Int32] {
        var result: [Int32] = []
        var current = pid
        while result.count < 64, let parent = parent(of: current), parent > 1 {
            result.append(parent)
            current = parent
        }
        return result
    }

    /// The file name of the executable of `pid` (what `application.process.binary` holds).
    static func binary(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init)
    }

    static func parent(of pid: Int32) -> Int32? {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
