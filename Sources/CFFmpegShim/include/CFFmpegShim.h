// The parts of FFmpeg (libavformat, libavcodec, libswresample, libavutil) that Swift cannot call
// directly: error-code macros built from FFERRTAG and AVERROR, AV_NOPTS_VALUE, av_err2str's
// compound literal, and the channel-layout fallbacks that FFmpeg spells as macros. Every symbol is
// prefixed CFFmpegShim_ and is a plain function, so Swift sees ordinary declarations.
#ifndef CFFMPEGSHIM_H
#define CFFMPEGSHIM_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswresample/swresample.h>
#include <stddef.h>
#include <stdint.h>

/// AVERROR_EOF.
int CFFmpegShim_errorEndOfFile(void);
/// AVERROR(EAGAIN).
int CFFmpegShim_errorAgain(void);
/// AVERROR(ENOENT), AVERROR(EACCES), AVERROR(EISDIR).
int CFFmpegShim_errorNoSuchFile(void);
int CFFmpegShim_errorPermission(void);
int CFFmpegShim_errorIsDirectory(void);
/// AVERROR_INVALIDDATA, AVERROR_STREAM_NOT_FOUND, AVERROR_DECODER_NOT_FOUND, AVERROR_PATCHWELCOME.
int CFFmpegShim_errorInvalidData(void);
int CFFmpegShim_errorStreamNotFound(void);
int CFFmpegShim_errorDecoderNotFound(void);
int CFFmpegShim_errorPatchWelcome(void);

/// AV_NOPTS_VALUE: a timestamp that is not known.
int64_t CFFmpegShim_noTimestamp(void);

/// av_err2str: writes FFmpeg's description of `code` to `buffer` (always NUL-terminated).
void CFFmpegShim_describeError(int code, char *buffer, size_t size);

/// Makes `codec`'s decoder report damaged data as an error instead of concealing it: CRC checks,
/// bitstream checks and AV_EF_EXPLODE, so a damaged packet is dropped rather than played.
void CFFmpegShim_setStrictErrorRecognition(AVCodecContext *codec);

/// Allocates and initialises a resampler from (`inLayout`, `inFormat`, `inRate`) to interleaved
/// 32-bit float stereo at `outRate`. A layout of unspecified order (a WAV without a channel mask)
/// gets FFmpeg's default layout for its channel count; mono plays at its own level on both
/// channels, 5.1 and other layouts are downmixed with libswresample's standard matrix (centre and
/// surrounds at -3 dB, LFE left out). Returns 0 or an AVERROR.
int CFFmpegShim_makeStereoResampler(
    SwrContext **resampler, const AVChannelLayout *inLayout, int inFormat, int inRate, int outRate);

/// swr_convert of `frame`'s samples (NULL flushes the resampler's delay) into at most
/// `capacityFrames` interleaved float stereo frames at `output`. Returns the frames written or an
/// AVERROR.
int CFFmpegShim_convert(SwrContext *resampler, const AVFrame *frame, float *output, int capacityFrames);

/// swr_convert of `frame`'s samples from sample `offset` on (0 ≤ offset ≤ nb_samples), as
/// CFFmpegShim_convert: a seek starts the resampler on the sample where the file decoded from its
/// start had it in the same phase.
int CFFmpegShim_convertFrom(
    SwrContext *resampler, const AVFrame *frame, int offset, float *output, int capacityFrames);

/// The number of output frames a conversion of `inputFrames` more input frames can produce at
/// most, given what the resampler holds (swr_get_out_samples).
int CFFmpegShim_outputCapacity(SwrContext *resampler, int inputFrames);

/// Whether `frame`'s format, rate and channel layout are what `codec` said when the resampler was
/// made (`format`, `rate`, `layout`); a stream may change them mid-way (a chained Ogg file).
int CFFmpegShim_frameMatches(const AVFrame *frame, int format, int rate, const AVChannelLayout *layout);

/// Sets FFmpeg's process-wide log level to `level` (AV_LOG_QUIET = -8, AV_LOG_ERROR = 16) if it is
/// still FFmpeg's default (AV_LOG_INFO), so a host's own choice is kept. Returns the level in force.
int CFFmpegShim_lowerDefaultLogLevel(int level);

/// The stream at `index` of `format`.
AVStream *CFFmpegShim_stream(const AVFormatContext *format, unsigned int index);

#endif
