internal import CFFmpeg
internal import CFFmpegShim
import SharedSession

/// libswresample converting a decoder's frames to interleaved float stereo at 48 kHz, made again when a
/// stream changes its sample format, rate or channel layout mid-way. Used by one thread at a time, as
/// ``MediaDecoder`` is.
final class StereoResampler {
    private var context: OpaquePointer?
    /// What the context was made for.
    private(set) var inputFormat: Int32
    private(set) var inputRate: Int32
    private var inputLayout = AVChannelLayout()

    /// A resampler for audio of `format` at `rate` in `layout`; `path` names the file in the error.
    ///
    /// - Throws: `SessionError` with code `mediaUnreadable` when libswresample cannot convert it.
    init(path: String, format: Int32, rate: Int32, layout: UnsafePointer<AVChannelLayout>) throws(SessionError) {
        context = try Self.makeContext(path: path, format: format, rate: rate, layout: layout)
        inputFormat = format
        inputRate = rate
        _ = av_channel_layout_copy(&inputLayout, layout)
    }

    deinit {
        if context != nil { swr_free(&context) }
        av_channel_layout_uninit(&inputLayout)
    }

    /// Whether `frame` has the format, rate and layout the resampler was made for.
    func matches(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        CFFmpegShim_frameMatches(frame, inputFormat, inputRate, &inputLayout) != 0
    }

    /// Makes the resampler again for `frame`'s format, rate and layout. On a throw it is unchanged.
    func remake(for frame: UnsafeMutablePointer<AVFrame>, path: String) throws(SessionError) {
        let made = try Self.makeContext(
            path: path, format: frame.pointee.format, rate: frame.pointee.sample_rate,
            layout: &frame.pointee.ch_layout)
        if context != nil { swr_free(&context) }
        context = made
        inputFormat = frame.pointee.format
        inputRate = frame.pointee.sample_rate
        av_channel_layout_uninit(&inputLayout)
        _ = av_channel_layout_copy(&inputLayout, &frame.pointee.ch_layout)
    }

    /// Drops the delay line: what comes next does not follow on from what came before.
    func reset() {
        if let context { _ = swr_init(context) }
    }

    /// swr_convert of `frame` from sample `offset` on (nil: flush what the delay line holds) appended
    /// to `output`; returns frames or an AVERROR.
    func append(
        _ frame: UnsafeMutablePointer<AVFrame>?, offset: Int32 = 0, into output: inout [Float]
    ) -> Int32 {
        guard let context else { return 0 }
        let inputFrames = frame.map { $0.pointee.nb_samples - offset } ?? 0
        let capacity = max(0, CFFmpegShim_outputCapacity(context, inputFrames)) + 32
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: Int(capacity) * 2))
        let converted = output.withUnsafeMutableBufferPointer { buffer in
            if let frame {
                CFFmpegShim_convertFrom(context, frame, offset, buffer.baseAddress! + start, capacity)
            } else {
                CFFmpegShim_convert(context, nil, buffer.baseAddress! + start, capacity)
            }
        }
        output.removeSubrange((start + Int(max(0, converted)) * 2)...)
        return converted
    }

    private static func makeContext(
        path: String, format: Int32, rate: Int32, layout: UnsafePointer<AVChannelLayout>
    ) throws(SessionError) -> OpaquePointer {
        var resampler: OpaquePointer?
        let made = CFFmpegShim_makeStereoResampler(
            &resampler, layout, format, rate, Int32(AudioFormat.standard.sampleRate))
        guard made >= 0, let resampler else {
            throw SessionError.mediaUnreadable(
                path,
                "has audio at \(rate) Hz, \(layout.pointee.nb_channels) channels that cannot be converted "
                    + "to 48 kHz stereo (\(SessionError.describeFFmpegError(made)))",
                fix: "re-encode the audio with ffmpeg (for instance `-ar 48000 -ac 2`)")
        }
        return resampler
    }
}
