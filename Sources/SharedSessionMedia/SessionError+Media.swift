internal import CFFmpeg
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

    /// Part of the file is damaged or cut short: `what` went wrong, with FFmpeg's `code`.
    static func mediaDamaged(_ path: String, _ what: String, _ code: Int32) -> SessionError {
        .mediaUnreadable(
            path, "is damaged or truncated: \(what) (\(describeFFmpegError(code)))",
            fix: "re-encode or download the file again; playback goes on where the file can be read")
    }

    /// The file could not be opened as media: FFmpeg's `code` from `avformat_open_input` said why.
    static func mediaCannotOpen(_ path: String, code: Int32) -> SessionError {
        switch code {
        case CFFmpegShim_errorNoSuchFile():
            return .mediaFileMissing(
                path, "does not exist", fix: "check the path (relative paths start at the working directory)")
        case CFFmpegShim_errorPermission():
            return .mediaFileMissing(
                path, "cannot be read (permission denied)", fix: "make it readable by this process")
        case CFFmpegShim_errorIsDirectory():
            return .mediaFileMissing(path, "is a directory", fix: "name a media file inside it")
        default:
            return .mediaUnreadable(
                path,
                "is not a media file FFmpeg can read, or its header or index is damaged or missing "
                    + "(\(SessionError.describeFFmpegError(code)))",
                fix: "pass an audio or video file (WAV, FLAC, Ogg, Opus, MP3, MP4, MKV, WebM); if it is one, it is "
                    + "incomplete or damaged: copy or download it again")
        }
    }

    /// What streams a file holds, for an error about the one it lacks ("1 video stream, 1 subtitle stream").
    static func streamSummary(_ format: UnsafeMutablePointer<AVFormatContext>) -> String {
        var counts: [String: Int] = [:]
        for index in 0..<format.pointee.nb_streams {
            guard let parameters = CFFmpegShim_stream(format, index)?.pointee.codecpar else { continue }
            let type = av_get_media_type_string(parameters.pointee.codec_type).map { String(cString: $0) } ?? "other"
            counts[type, default: 0] += 1
        }
        if counts.isEmpty { return "no streams" }
        return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key) stream\($0.value == 1 ? "" : "s")" }
            .joined(separator: ", ")
    }

    /// An FFmpeg library's version number as major.minor.micro.
    static func libraryVersion(_ version: UInt32) -> String {
        "\(version >> 16).\((version >> 8) & 0xff).\(version & 0xff)"
    }
}
