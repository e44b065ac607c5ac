#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes and reads 32-bit float WAV files (format tag 3, `WAVE_FORMAT_IEEE_FLOAT`), so what an
/// engine rendered can be listened to and compared bit for bit.
public enum WAVFile {
    /// Writes interleaved samples to `path`.
    ///
    /// - Throws: ``SessionError`` with code `fileError` naming the path if it cannot be written.
    public static func write(_ samples: [Float], format: AudioFormat = .standard, to path: String) throws(SessionError)
    {
        var data = Data()
        let dataBytes = UInt32(samples.count * 4)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        // Float data needs the 18-byte fmt chunk (with cbSize) and a fact chunk to be canonical.
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(4 + 26 + 12 + 8 + dataBytes))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(18))
        append(UInt16(3))
        append(UInt16(format.channels))
        append(UInt32(format.sampleRate))
        append(UInt32(format.sampleRate * format.channels * 4))
        append(UInt16(format.channels * 4))
        append(UInt16(32))
        append(UInt16(0))
        data.append(contentsOf: Array("fact".utf8))
        append(UInt32(4))
        append(UInt32(samples.count / format.channels))
        data.append(contentsOf: Array("data".utf8))
        append(dataBytes)
        for sample in samples { append(sample.bitPattern) }
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw SessionError(
                code: .fileError, message: "could not write \(path): \(error); check the folder exists and is writable")
        }
    }

    /// Reads a 32-bit float WAV file written by ``write(_:format:to:)`` (or any canonical one) and
    /// returns its format and interleaved samples.
    ///
    /// - Throws: ``SessionError`` with code `fileError` if the file cannot be read or is not 32-bit
    ///   float PCM.
    public static func read(from path: String) throws(SessionError) -> (format: AudioFormat, samples: [Float]) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SessionError(code: .fileError, message: "could not read \(path): \(error)")
        }
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, Array(bytes[0..<4]) == Array("RIFF".utf8), Array(bytes[8..<12]) == Array("WAVE".utf8)
        else {
            throw SessionError(code: .fileError, message: "\(path) is not a RIFF/WAVE file")
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
        throw SessionError(code: .fileError, message: "\(path) has no fmt chunk before its data chunk")
    }
}
