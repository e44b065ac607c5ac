#include "CFFmpegShim.h"

#include <errno.h>
#include <stdio.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>

int CFFmpegShim_errorEndOfFile(void) { return AVERROR_EOF; }
int CFFmpegShim_errorAgain(void) { return AVERROR(EAGAIN); }
int CFFmpegShim_errorNoSuchFile(void) { return AVERROR(ENOENT); }
int CFFmpegShim_errorPermission(void) { return AVERROR(EACCES); }
int CFFmpegShim_errorIsDirectory(void) { return AVERROR(EISDIR); }
int CFFmpegShim_errorInvalidData(void) { return AVERROR_INVALIDDATA; }
int CFFmpegShim_errorStreamNotFound(void) { return AVERROR_STREAM_NOT_FOUND; }
int CFFmpegShim_errorDecoderNotFound(void) { return AVERROR_DECODER_NOT_FOUND; }
int CFFmpegShim_errorPatchWelcome(void) { return AVERROR_PATCHWELCOME; }

int64_t CFFmpegShim_noTimestamp(void) { return AV_NOPTS_VALUE; }

void CFFmpegShim_describeError(int code, char *buffer, size_t size) {
    if (size == 0) return;
    if (av_strerror(code, buffer, size) < 0) {
        snprintf(buffer, size, "FFmpeg error %d", code);
    }
    buffer[size - 1] = 0;
}

void CFFmpegShim_setStrictErrorRecognition(AVCodecContext *codec) {
    codec->err_recognition |= AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_EXPLODE;
}

int CFFmpegShim_makeStereoResampler(
    SwrContext **resampler, const AVChannelLayout *inLayout, int inFormat, int inRate, int outRate) {
    AVChannelLayout input = {0};
    int result;
    if (inLayout->order == AV_CHANNEL_ORDER_UNSPEC || av_channel_layout_check(inLayout) == 0) {
        av_channel_layout_default(&input, inLayout->nb_channels);
    } else {
        result = av_channel_layout_copy(&input, inLayout);
        if (result < 0) return result;
    }
    AVChannelLayout stereo = AV_CHANNEL_LAYOUT_STEREO;
    result = swr_alloc_set_opts2(
        resampler, &stereo, AV_SAMPLE_FMT_FLT, outRate, &input, (enum AVSampleFormat)inFormat, inRate, 0, NULL);
    int monoInput = input.nb_channels == 1;
    av_channel_layout_uninit(&input);
    if (result < 0) return result;
    if (monoInput) {
        // libswresample spreads mono to stereo at -3 dB a side; a player plays a mono track at its
        // own level on both sides.
        const double unity[2] = {1.0, 1.0};
        result = swr_set_matrix(*resampler, unity, 1);
        if (result < 0) {
            swr_free(resampler);
            return result;
        }
    }
    result = swr_init(*resampler);
    if (result < 0) swr_free(resampler);
    return result;
}

int CFFmpegShim_convert(SwrContext *resampler, const AVFrame *frame, float *output, int capacityFrames) {
    uint8_t *out[1] = {(uint8_t *)output};
    if (frame == NULL) return swr_convert(resampler, out, capacityFrames, NULL, 0);
    return swr_convert(
        resampler, out, capacityFrames, (const uint8_t **)frame->extended_data, frame->nb_samples);
}

int CFFmpegShim_convertFrom(
    SwrContext *resampler, const AVFrame *frame, int offset, float *output, int capacityFrames) {
    if (offset <= 0) return CFFmpegShim_convert(resampler, frame, output, capacityFrames);
    if (offset > frame->nb_samples) offset = frame->nb_samples;
    uint8_t *in[AV_NUM_DATA_POINTERS * 8];
    int channels = frame->ch_layout.nb_channels;
    int bytes = av_get_bytes_per_sample((enum AVSampleFormat)frame->format);
    int planar = av_sample_fmt_is_planar((enum AVSampleFormat)frame->format);
    int planes = planar ? channels : 1;
    if (planes > (int)(sizeof(in) / sizeof(in[0]))) return AVERROR(EINVAL);
    for (int plane = 0; plane < planes; plane++) {
        in[plane] = frame->extended_data[plane] + (size_t)offset * (size_t)bytes * (size_t)(planar ? 1 : channels);
    }
    uint8_t *out[1] = {(uint8_t *)output};
    return swr_convert(resampler, out, capacityFrames, (const uint8_t **)in, frame->nb_samples - offset);
}

int CFFmpegShim_outputCapacity(SwrContext *resampler, int inputFrames) {
    return swr_get_out_samples(resampler, inputFrames);
}

int CFFmpegShim_frameMatches(const AVFrame *frame, int format, int rate, const AVChannelLayout *layout) {
    if (frame->format != format || frame->sample_rate != rate) return 0;
    if (frame->ch_layout.nb_channels != layout->nb_channels) return 0;
    if (frame->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || layout->order == AV_CHANNEL_ORDER_UNSPEC) return 1;
    return av_channel_layout_compare(&frame->ch_layout, layout) == 0;
}

int CFFmpegShim_lowerDefaultLogLevel(int level) {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(level);
    return av_log_get_level();
}

AVStream *CFFmpegShim_stream(const AVFormatContext *format, unsigned int index) {
    if (format == NULL || index >= format->nb_streams) return NULL;
    return format->streams[index];
}
