// libFuzzer target: a media file's bytes opened by `MediaFileSource`, played (frames rendered as an
// engine renders them), sought once and played again. Every input must end in a source that plays (or
// ends) or a `SessionError`; a trap, a hang (-timeout) or a leak is a finding. The bytes go to a
// temporary file, as users hand the source a path.
import FuzzDriver
import SharedSession
import SharedSessionMedia

#if canImport(Glibc)
    import Glibc
#endif

/// One temporary file per process, written again for each input.
nonisolated(unsafe) private var inputPath: String?

private func writeInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> String? {
    if inputPath == nil {
        var template = Array("/tmp/sharedsession-fuzz-media-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { return nil }
        close(descriptor)
        inputPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
    guard let path = inputPath, let file = fopen(path, "wb") else { return nil }
    defer { fclose(file) }
    guard size == 0 || fwrite(data, 1, size, file) == size else { return nil }
    return path
}

@main enum Fuzz {
    static func main() { runFuzzer(fuzzMedia) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMedia(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard let path = writeInput(data, size) else { return 0 }
    let frames = 1024
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
    defer { buffer.deallocate() }
    do {
        let source = try MediaFileSource(path: path, bufferFrames: 4096, startsPlaying: true)
        _ = source.info.codec
        // Ten quanta as an offline engine renders them (waiting for the decoder), a seek to the middle
        // of what the file says it holds, then ten more.
        for _ in 0..<10 {
            try source.waitUntilReady(frames: frames, timeout: .seconds(5))
            _ = source.render(into: buffer, frames: frames)
        }
        let half = source.duration.map { $0 / 2 } ?? .milliseconds(100)
        try source.seek(to: half)
        for _ in 0..<10 {
            try source.waitUntilReady(frames: frames, timeout: .seconds(5))
            _ = source.render(into: buffer, frames: frames)
        }
        _ = source.clock
    } catch {
        _ = error.message
    }
    return 0
}
