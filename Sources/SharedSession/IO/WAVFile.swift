#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes and reads 32-bit float WAV files (format tag 3, `WAVE_FORMAT_IEEE_FLOAT`), so what an
/// engine rendered can be listened to and compared bit for bit.
///
/// The files are written and read with the C library's `fopen`, `fwrite` and `fread`: the core
/// imports no Foundation.
public enum WAVFile {
    /// Writes interleaved samples to `path`, replacing a file that is there.
    ///
    /// - Throws: ``SessionError`` with code `fileError` naming the path, why it cannot be written and
    ///   what to do about it.
    public static func write(_ samples: [Float], format: AudioFormat = .standard, to path: String) throws(SessionError)
    {
        var header: [UInt8] = []
        let dataBytes = UInt32(samples.count * 4)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) }
        }
        // Float data needs the 18-byte fmt chunk (with cbSize) and a fact chunk to be canonical.
        header.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(4 + 26 + 12 + 8 + dataBytes))
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(18))
        append(UInt16(3))
        append(UInt16(format.channels))
        append(UInt32(format.sampleRate))
        append(UInt32(format.sampleRate * format.channels * 4))
        append(UInt16(format.channels * 4))
        append(UInt16(32))
        append(UInt16(0))
        header.append(contentsOf: Array("fact".utf8))
        append(UInt32(4))
        append(UInt32(samples.count / format.channels))
        header.append(contentsOf: Array("data".utf8))
        append(dataBytes)
        let body = samples.map { $0.bitPattern.littleEndian }

        guard let file = fopen(path, "wb") else { throw failure(writing: path, errno) }
        let written =
            header.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
            && body.withUnsafeBytes { $0.isEmpty || fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
        // Keep the first error: fclose may fail only because fwrite did.
        let writeError = written ? 0 : errno
        let closed = fclose(file) == 0
        if !written || !closed {
            let code = writeError != 0 ? writeError : errno
            remove(path)
            throw failure(writing: path, code)
        }
    }

    /// Reads a 32-bit float WAV file written by ``write(_:format:to:)`` (or any canonical one) and
    /// returns its format and interleaved samples.
    ///
    /// - Throws: ``SessionError`` with code `fileError` naming the path if the file cannot be read or
    ///   is not 32-bit float PCM, and what to do about it.
    public static func read(from path: String) throws(SessionError) -> (format: AudioFormat, samples: [Float]) {
        let bytes = try contents(of: path)
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, Array(bytes[0..<4]) == Array("RIFF".utf8), Array(bytes[8..<12]) == Array("WAVE".utf8)
        else {
            throw SessionError(
                code: .fileError,
                message: "\(path) is not a RIFF/WAVE file: convert it (sox in -e float -b 32 out.wav)")
        }
        var offset = 12
        var format: AudioFormat?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(u32(offset + 4))
            let body = offset + 8
            guard body + size <= bytes.count else { break }
            if id == "fmt " {
                guard size >= 16, u16(body) == 3, u16(body + 14) == 32 else {
                    throw SessionError(
                        code: .fileError,
                        message: "\(path) is not 32-bit float PCM: convert it (sox in.wav -e float -b 32 out.wav)")
                }
                format = AudioFormat(sampleRate: Int(u32(body + 4)), channels: Int(u16(body + 2)))
            } else if id == "data", let format {
                let count = size / 4
                let samples = (0..<count).map { Float(bitPattern: u32(body + $0 * 4)) }
                return (format, samples)
            }
            offset = body + size + (size & 1)
        }
        throw SessionError(
            code: .fileError,
            message: "\(path) has no fmt chunk before its data chunk: the file is cut short or not a canonical WAV file"
        )
    }

    /// The whole file at `path`.
    private static func contents(of path: String) throws(SessionError) -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw failure(reading: path, errno) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes.append(contentsOf: chunk[0..<count])
            if count < chunk.count { break }
        }
        if ferror(file) != 0 { throw failure(reading: path, errno) }
        return bytes
    }

    private static func failure(writing path: String, _ code: Int32) -> SessionError {
        let fix =
            switch code {
            case ENOENT: "create the folder it is in first"
            case EACCES, EPERM, EROFS: "choose a folder you may write to, or change its permissions"
            case EISDIR: "it is a folder: give the path of a file in it"
            case ENOSPC, EDQUOT: "free some space on that disk, or write somewhere else"
            default: "check that the folder exists and is writable"
            }
        return SessionError(code: .fileError, message: "cannot write \(path): \(describe(code)); \(fix)")
    }

    private static func failure(reading path: String, _ code: Int32) -> SessionError {
        let fix =
            switch code {
            case ENOENT: "check the path: no file is there"
            case EACCES, EPERM: "make the file readable, or copy it somewhere you may read"
            case EISDIR: "it is a folder: give the path of a WAV file in it"
            default: "check the path and that the file is readable"
            }
        return SessionError(code: .fileError, message: "cannot read \(path): \(describe(code)); \(fix)")
    }

    /// The C library's words for `code` (`strerror`).
    private static func describe(_ code: Int32) -> String {
        code == 0 ? "an unknown error" : String(cString: strerror(code))
    }
}
