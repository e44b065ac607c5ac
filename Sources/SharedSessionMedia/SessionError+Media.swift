internal import CFFmpegShim
import SharedSession

extension SessionError {
    /// FFmpeg's description of an AVERROR code, with the code.
    static func describeFFmpegError(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let description = buffer.withUnsafeMutableBufferPointer { pointer -> String in
            CFFmpegShim_describeError(code, pointer.baseAddress, pointer.count)
            return String(cString: pointer.baseAddress!)
        }
        return "\(description) (AVERROR \(code))"
    }

    /// The file cannot be opened at all: missing, unreadable or a directory.
    static func mediaFileMissing(_ path: String, _ problem: String, fix: String) -> SessionError {
        SessionError(code: .fileError, message: "media file '\(path)' \(problem): \(fix)")
    }

    /// The file is there but does not decode as media with an audio track FFmpeg can play.
    static func mediaUnreadable(_ path: String, _ problem: String, fix: String) -> SessionError {
        SessionError(code: .mediaUnreadable, message: "media file '\(path)' \(problem): \(fix)")
    }

    /// The file is media but carries no audio.
    static func noAudioTrack(_ path: String, _ problem: String, fix: String) -> SessionError {
        SessionError(code: .noAudioTrack, message: "media file '\(path)' \(problem): \(fix)")
    }
}
