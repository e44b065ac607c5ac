internal import CFFmpeg
internal import CFFmpegShim
import SharedSession

/// FFmpeg's demuxer, decoder and resampler for the audio track of one file, producing interleaved
/// float stereo at 48 kHz. Used by one thread at a time: the thread that makes the source, then the
/// decoder thread. Not for the render thread (it allocates, and FFmpeg takes locks).
final class MediaDecoder {
    /// What one ``step(into:)`` did.
    enum Step {
        /// Appended this many frames (0 when a packet of another stream was skipped, the decoder
        /// wanted more input, or a decoded frame fell before a seek target).
        case produced(Int)
        /// No more frames: the file ended and the decoder and resampler were drained into the buffer.
        case endOfFile
        /// Part of the file could not be read or decoded. `fatal` when reading cannot go on.
        case failed(SessionError, fatal: Bool)
    }

    let path: String
    let info: MediaInfo
    /// The track's duration, when the container or the stream says.
    let duration: Duration?

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private let resampler: StereoResampler
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let startTimestamp: Int64
    private let outputRate = Int32(AudioFormat.standard.sampleRate)

    /// Samples the decoder needs before a seek target to play what a decode from the start plays
    /// there (at the codec's rate): the container's pre-roll (Opus: 80 ms), and at least four codec
    /// frames and 200 ms, which covers MP3's bit reservoir and every codec's overlap.
    private let decoderPreroll: Int32
    /// The length in samples that every packet of the codec is a multiple of, where timestamps are
    /// too coarse to name a sample (Matroska's milliseconds): Opus's 2.5 ms, or the codec's frame size.
    private let packetGranule: Int32?

    private var draining = false
    private var finished = false
    /// Media time zero in the stream's timestamps: the timestamp of the first frame the decoder gave
    /// from the start (after it dropped the codec's own start-up, such as Opus's pre-skip). nil until then.
    private var origin: Int64?
    /// The first frame's length from the start: where the codec's packet grid sits in media time.
    private var firstFrameLength: Int32 = 0
    /// A seek whose first frames are still to come.
    private var seekPlan: SeekPlan?
    /// Output frames still to drop before the target of the last seek.
    private var dropFrames = 0
    /// Consecutive reads that failed with something other than end of file.
    private var readFailures = 0
    /// Whether `packet` holds a packet the decoder asked to be sent again (EAGAIN).
    private var holdingPacket = false
    /// Stretches of media time the file skipped, filled with silence; taken by ``takeGap()``.
    private var gaps = MediaGapFinder()
    /// Frame indexes of the output (frames counted from the start of the array the decoder appends
    /// to) where the audio is discontinuous: a gap, a splice after a damaged frame, a decoder or
    /// resampler reset. Taken by ``takeDiscontinuities()``; the render side fades there.
    private var discontinuities: [Int] = []
    /// A step failed since the last frame was appended: the next frame does not follow on.
    private var failedSinceLastFrame = false

    private static let noTimestamp = CFFmpegShim_noTimestamp()

    /// Opens `path` and prepares its best audio track for decoding.
    init(path: String) throws(SessionError) {
        self.path = path
        _ = CFFmpegShim_lowerDefaultLogLevel(-8)  // AV_LOG_QUIET: errors are reported as SessionErrors

        var format: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&format, path, nil, nil)
        guard opened >= 0, let format else {
            throw SessionError.mediaCannotOpen(path, code: opened)
        }
        // What is made is kept in locals (and freed by `cleanup` on a throw) until nothing can fail.
        var cleanup = Cleanup(format: format)

        let found = avformat_find_stream_info(format, nil)
        guard found >= 0 else {
            throw SessionError.mediaUnreadable(
                path, "could not be read as media (\(SessionError.describeFFmpegError(found)))",
                fix: "check that it is a complete audio or video file; re-encode it with ffmpeg if it is damaged")
        }
        let containerName = format.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"

        var decoderPointer: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, &decoderPointer, 0)
        if best == CFFmpegShim_errorStreamNotFound() || best < 0 && best != CFFmpegShim_errorDecoderNotFound() {
            throw SessionError.noAudioTrack(
                path,
                "has no audio track (FFmpeg reads it as '\(containerName)' with "
                    + "\(SessionError.streamSummary(format)))",
                fix: "play the file without a SharedSession audio source, or give it an audio track")
        }
        guard let stream = CFFmpegShim_stream(format, UInt32(max(best, 0))), let parameters = stream.pointee.codecpar
        else {
            throw SessionError.mediaUnreadable(
                path, "has an audio track FFmpeg cannot describe", fix: "re-encode it with ffmpeg")
        }
        let codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        guard best >= 0, let decoderPointer else {
            throw SessionError.mediaUnreadable(
                path,
                "has an audio track in codec '\(codecName)' that this FFmpeg build (libavcodec "
                    + "\(SessionError.libraryVersion(avcodec_version()))) has no decoder for",
                fix: "re-encode the audio to a supported codec (for instance `ffmpeg -i IN -c:v copy -c:a aac OUT`)")
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        startTimestamp = stream.pointee.start_time == Self.noTimestamp ? 0 : stream.pointee.start_time
        let codecRate = max(1, parameters.pointee.sample_rate)
        decoderPreroll = max(parameters.pointee.seek_preroll, 4 * parameters.pointee.frame_size, codecRate / 5)
        if parameters.pointee.codec_id == AV_CODEC_ID_OPUS {
            packetGranule = codecRate / 400
        } else {
            packetGranule = parameters.pointee.frame_size > 0 ? parameters.pointee.frame_size : nil
        }
        // Only the audio track's packets are wanted; the demuxer may skip the others cheaply.
        for index in 0..<format.pointee.nb_streams where Int32(index) != best {
            CFFmpegShim_stream(format, index)?.pointee.discard = AVDISCARD_ALL
        }

        guard let codec = avcodec_alloc_context3(decoderPointer) else {
            throw SessionError.mediaUnreadable(path, "could not get a decoder context", fix: "free some memory")
        }
        cleanup.codec = codec
        let copied = avcodec_parameters_to_context(codec, parameters)
        guard copied >= 0 else {
            throw SessionError.mediaUnreadable(
                path, "has '\(codecName)' parameters FFmpeg rejects (\(SessionError.describeFFmpegError(copied)))",
                fix: "re-encode it with ffmpeg")
        }
        codec.pointee.pkt_timebase = stream.pointee.time_base
        CFFmpegShim_setStrictErrorRecognition(codec)
        let codecOpened = avcodec_open2(codec, decoderPointer, nil)
        guard codecOpened >= 0 else {
            throw SessionError.mediaUnreadable(
                path,
                "has a '\(codecName)' audio track the decoder refuses "
                    + "(\(SessionError.describeFFmpegError(codecOpened)))",
                fix: "re-encode the audio to a supported codec (for instance `ffmpeg -i IN -c:v copy -c:a aac OUT`)")
        }
        guard codec.pointee.sample_rate > 0, codec.pointee.ch_layout.nb_channels > 0 else {
            throw SessionError.mediaUnreadable(
                path,
                "has a '\(codecName)' audio track with \(codec.pointee.sample_rate) Hz and "
                    + "\(codec.pointee.ch_layout.nb_channels) channels",
                fix: "re-encode it with ffmpeg; the track's header is damaged")
        }
        cleanup.packet = av_packet_alloc()
        cleanup.frame = av_frame_alloc()
        guard cleanup.packet != nil, cleanup.frame != nil else {
            throw SessionError.mediaUnreadable(path, "could not get decoding buffers", fix: "free some memory")
        }

        var layoutName = [CChar](repeating: 0, count: 64)
        _ = layoutName.withUnsafeMutableBufferPointer {
            av_channel_layout_describe(&codec.pointee.ch_layout, $0.baseAddress, $0.count)
        }
        info = MediaInfo(
            container: containerName,
            codec: codecName,
            sampleRate: Int(codec.pointee.sample_rate),
            channels: Int(codec.pointee.ch_layout.nb_channels),
            channelLayout: layoutName.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })

        if stream.pointee.duration != Self.noTimestamp, stream.pointee.duration > 0 {
            duration = Self.duration(seconds: Double(stream.pointee.duration) * Self.seconds(timeBase))
        } else if format.pointee.duration != Self.noTimestamp, format.pointee.duration > 0 {
            duration = Self.duration(seconds: Double(format.pointee.duration) / 1_000_000)
        } else {
            duration = nil
        }
        self.resampler = try StereoResampler(
            path: path, format: codec.pointee.sample_fmt.rawValue, rate: codec.pointee.sample_rate,
            layout: &codec.pointee.ch_layout)
        self.format = format
        self.codec = codec
        self.packet = cleanup.packet
        self.frame = cleanup.frame
        cleanup.disarm()
    }

    deinit {
        if frame != nil { av_frame_free(&frame) }
        if packet != nil { av_packet_free(&packet) }
        if codec != nil { avcodec_free_context(&codec) }
        if format != nil { avformat_close_input(&format) }
    }

    /// Decodes a little more of the file and appends what it made to `output` (interleaved stereo).
    func step(into output: inout [Float]) -> Step {
        let result = decodeStep(into: &output)
        if case .failed = result { failedSinceLastFrame = true }
        return result
    }

    /// The frame indexes of `output` (as passed to ``step(into:)``) where the audio appended since the
    /// last call is discontinuous, in order: where silence stands in for missing media, where audio
    /// resumes after it, or after a frame that was dropped. A player fades there, as at a seek.
    func takeDiscontinuities() -> [Int] {
        defer { discontinuities.removeAll(keepingCapacity: true) }
        return discontinuities
    }

    private func decodeStep(into output: inout [Float]) -> Step {
        guard !finished, let codec, let frame, let packet, let format else { return .endOfFile }
        let received = avcodec_receive_frame(codec, frame)
        if received >= 0 {
            defer { av_frame_unref(frame) }
            return convert(frame, into: &output)
        }
        if received == CFFmpegShim_errorEndOfFile() {
            // The decoder is drained: what the resampler still holds is the file's last frames.
            finished = true
            let start = output.count
            _ = resampler.append(nil, into: &output)
            dropBeforeTarget(from: start, in: &output)
            return .endOfFile
        }
        if received != CFFmpegShim_errorAgain() {
            return .failed(.mediaDamaged(path, "a frame could not be decoded", received), fatal: false)
        }
        if draining {
            finished = true
            return .endOfFile
        }

        if holdingPacket {
            // The decoder refused this packet until its frames were taken; they were: send it again.
            return send(packet, to: codec)
        }
        let read = av_read_frame(format, packet)
        if read < 0 {
            if read != CFFmpegShim_errorEndOfFile() {
                readFailures += 1
                if readFailures < 32 {
                    return .failed(.mediaDamaged(path, "a packet could not be read", read), fatal: false)
                }
            }
            draining = true
            _ = avcodec_send_packet(codec, nil)
            if read != CFFmpegShim_errorEndOfFile() {
                return .failed(.mediaDamaged(path, "reading stopped after repeated errors", read), fatal: false)
            }
            return .produced(0)
        }
        readFailures = 0
        guard packet.pointee.stream_index == streamIndex else {
            av_packet_unref(packet)
            return .produced(0)
        }
        return send(packet, to: codec)
    }

    /// Sends the packet read to the decoder: kept for another try if the decoder has no room yet,
    /// dropped (and reported) if the decoder finds it damaged.
    private func send(
        _ packet: UnsafeMutablePointer<AVPacket>, to codec: UnsafeMutablePointer<AVCodecContext>
    ) -> Step {
        let sent = avcodec_send_packet(codec, packet)
        holdingPacket = sent == CFFmpegShim_errorAgain()
        if holdingPacket { return .produced(0) }
        av_packet_unref(packet)
        if sent < 0 {
            return .failed(.mediaDamaged(path, "a damaged packet was dropped", sent), fatal: false)
        }
        return .produced(0)
    }

    /// Moves to output frame `target` of media time (0: the start). The demuxer goes to a packet
    /// before it by the decoder's pre-roll, and what is decoded before the target is dropped, so the
    /// first frame appended afterwards is the frame at `target`, the same sample a decode from the
    /// start gives there.
    func seek(toFrame target: Int) -> SessionError? {
        guard let format, let codec else { return nil }
        let plan = SeekPlan(target: target, rate: resampler.inputRate)
        let rate = Int(plan.rate)
        let from = plan.start - Int(decoderPreroll)
        let timestamp: Int64
        if from <= 0 {
            timestamp = startTimestamp
        } else {
            // In Double, clamped: a damaged file's time base and start can make the tick count overflow.
            let unit = Self.seconds(timeBase)
            let ticks = unit > 0 ? (Double(from) / Double(rate) / unit).rounded(.down) : 0
            timestamp = Self.clampedInt64(Double(origin ?? startTimestamp) + ticks)
        }
        var result = av_seek_frame(format, streamIndex, timestamp, Int32(AVSEEK_FLAG_BACKWARD))
        if result < 0 {
            // Some demuxers refuse a keyframe seek (FLAC without a seek table near its end): try the
            // generic path, then any frame before the target, then the start. Frames before the
            // target are decoded and dropped, so each lands on the same frame, only slower.
            result = avformat_seek_file(format, streamIndex, Int64.min, timestamp, timestamp, 0)
        }
        if result < 0 {
            result = av_seek_frame(format, streamIndex, timestamp, Int32(AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY))
        }
        if result < 0 {
            result = avformat_seek_file(format, streamIndex, Int64.min, startTimestamp, startTimestamp, 0)
        }
        guard result >= 0 else {
            let seconds = Double(target) / Double(outputRate)
            return SessionError.mediaUnreadable(
                path, "cannot seek to \(seconds) s (\(SessionError.describeFFmpegError(result)))",
                fix: "remux the file with ffmpeg so its container has an index (`ffmpeg -i IN -c copy OUT`)")
        }
        avcodec_flush_buffers(codec)
        if holdingPacket, let packet { av_packet_unref(packet) }
        holdingPacket = false
        resampler.reset()  // drops the delay line of the old position
        draining = false
        finished = false
        readFailures = 0
        seekPlan = plan
        dropFrames = 0
        discontinuities.removeAll()
        failedSinceLastFrame = false
        gaps.reset()
        return nil
    }

    /// The last stretch of missing media that was played as silence, if any since the last call.
    func takeGap() -> (at: Double, seconds: Double)? {
        gaps.take()
    }

    // MARK: Conversion

    private func convert(_ frame: UnsafeMutablePointer<AVFrame>, into output: inout [Float]) -> Step {
        var splice = failedSinceLastFrame
        failedSinceLastFrame = false
        if !resampler.matches(frame) {
            splice = true
            do {
                try resampler.remake(for: frame, path: path)
            } catch {
                return .failed(error, fatal: true)
            }
        }
        var silenceFrames = 0
        var offset: Int32 = 0
        let rate = frame.pointee.sample_rate
        let length = frame.pointee.nb_samples
        let timestamp = frame.pointee.best_effort_timestamp
        if origin == nil, timestamp != Self.noTimestamp {
            origin = timestamp
            firstFrameLength = length
        }
        // Where the frame starts in media time, in samples at its rate, as its timestamp says.
        // In Double: a damaged file's timestamps can be anything, their difference past Int64; a place
        // no Int can hold (past 2^52 samples) is no place at all.
        let stated: Double? =
            timestamp == Self.noTimestamp
            ? nil
            : ((Double(timestamp) - Double(origin ?? startTimestamp)) * Self.seconds(timeBase) * Double(rate))
                .nilUnlessPlace
        if var plan = seekPlan, plan.rate == rate {
            guard let position = placeAfterSeek(stated: stated, next: plan.next, rate: rate) else {
                // No timestamp to place it by: play from here.
                seekPlan = nil
                return appendDecoded(frame, offset: 0, silenceFrames: 0, splice: false, into: &output)
            }
            plan.next = position + Int(length)
            gaps.expectedStart = Double(position + Int(length)) / Double(rate)
            if position + Int(length) <= plan.start {
                seekPlan = plan
                return .produced(0)
            }
            seekPlan = nil
            (offset, dropFrames) = plan.cut(position: position, length: length)
        } else {
            seekPlan = nil
            // Media the demuxer skipped: silence in its place keeps the clock on media time.
            silenceFrames = gaps.follow(stated: stated, length: length, rate: rate)
        }
        return appendDecoded(frame, offset: offset, silenceFrames: silenceFrames, splice: splice, into: &output)
    }

    /// Where a frame after a seek starts, in samples of media time at `rate`: right after the frame
    /// before it when its timestamp agrees with that, else its timestamp, put on the codec's packet
    /// grid when timestamps are coarser than a sample (Matroska's milliseconds cannot name an Opus
    /// packet's first sample; every Opus packet is a whole number of 2.5 ms after the first).
    private func placeAfterSeek(stated: Double?, next: Int?, rate: Int32) -> Int? {
        let tick = Self.seconds(timeBase) * Double(rate)
        if let next, stated.map({ abs($0 - Double(next)) <= max(tick, 1) + 1 }) ?? true { return next }
        guard let stated else { return nil }
        guard tick > 1, let granule = packetGranule.map(Int.init), granule > 0 else { return Int(stated.rounded()) }
        let phase = Int(firstFrameLength) % granule
        let snapped = Int(((stated - Double(phase)) / Double(granule)).rounded()) * granule + phase
        return abs(Double(snapped) - stated) <= tick + 1 ? snapped : Int(stated.rounded())
    }

    /// Appends `silenceFrames` of silence, then `frame` from sample `offset` on, converted, dropping
    /// what is still to be dropped before a seek's target. Where the audio does not follow on (silence
    /// for a gap, a `splice` after a dropped frame) it marks a discontinuity, for the render side to fade.
    private func appendDecoded(
        _ frame: UnsafeMutablePointer<AVFrame>, offset: Int32, silenceFrames: Int, splice: Bool,
        into output: inout [Float]
    ) -> Step {
        let start = output.count
        if silenceFrames > 0 {
            // The audio before the gap ends with what the resampler still holds; after the gap it
            // starts afresh.
            _ = resampler.append(nil, into: &output)
            resampler.reset()
            markDiscontinuity(at: output.count / 2)
            output.append(contentsOf: repeatElement(0, count: silenceFrames * 2))
        }
        let decoded = output.count
        if splice || silenceFrames > 0 { markDiscontinuity(at: decoded / 2) }
        let result = resampler.append(frame, offset: offset, into: &output)
        guard result >= 0 else {
            output.removeSubrange(decoded...)
            return .failed(.mediaDamaged(path, "a frame could not be converted to 48 kHz stereo", result), fatal: false)
        }
        // Garbage is never played: a decoder that concealed damage with non-finite samples loses the frame.
        if output[decoded...].contains(where: { !$0.isFinite }) {
            output.removeSubrange(decoded...)
            return .failed(
                .mediaDamaged(
                    path, "a decoded frame held non-finite samples and was dropped", CFFmpegShim_errorInvalidData()),
                fatal: false)
        }
        dropBeforeTarget(from: decoded, in: &output)
        return .produced((output.count - start) / 2)
    }

    private func markDiscontinuity(at frame: Int) {
        if discontinuities.last != frame { discontinuities.append(frame) }
    }

    /// Drops the frames from `start` on that still precede the last seek's target.
    private func dropBeforeTarget(from start: Int, in output: inout [Float]) {
        guard dropFrames > 0 else { return }
        let dropped = min(dropFrames, (output.count - start) / 2)
        output.removeSubrange(start..<(start + dropped * 2))
        dropFrames -= dropped
    }

    // MARK: Helpers

    static func seconds(_ rational: AVRational) -> Double {
        rational.den == 0 ? 0 : Double(rational.num) / Double(rational.den)
    }

    /// A track's length from what the file says, nil when that is no length at all: not a number,
    /// negative, or beyond what a Duration of Int64 nanoseconds holds (292 years), as a damaged header says.
    static func duration(seconds: Double) -> Duration? {
        guard seconds.isFinite, seconds >= 0, seconds < 9e9 else { return nil }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// `value` as an Int64: NaN as 0, beyond the range at its nearest end (a damaged file's times).
    static func clampedInt64(_ value: Double) -> Int64 {
        guard !value.isNaN else { return 0 }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }

    /// Frees what a failed init made (deinit does not run for an object whose init threw before
    /// every stored property was set).
    private struct Cleanup: ~Copyable {
        var format: UnsafeMutablePointer<AVFormatContext>?
        var codec: UnsafeMutablePointer<AVCodecContext>?
        var packet: UnsafeMutablePointer<AVPacket>?
        var frame: UnsafeMutablePointer<AVFrame>?
        private var armed = true

        init(format: UnsafeMutablePointer<AVFormatContext>) { self.format = format }

        mutating func disarm() { armed = false }

        deinit {
            guard armed else { return }
            var frame = frame
            var packet = packet
            var codec = codec
            var format = format
            if frame != nil { av_frame_free(&frame) }
            if packet != nil { av_packet_free(&packet) }
            if codec != nil { avcodec_free_context(&codec) }
            if format != nil { avformat_close_input(&format) }
        }
    }
}

extension Double {
    /// Self when it can be a sample position (finite, within ±2^52), else nil: a damaged file's
    /// timestamps must not trap an Int conversion.
    fileprivate var nilUnlessPlace: Double? { isFinite && abs(self) < 0x1p52 ? self : nil }
}
