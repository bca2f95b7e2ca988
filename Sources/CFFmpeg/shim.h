#ifndef VELVET_CFFMPEG_SHIM_H
#define VELVET_CFFMPEG_SHIM_H
#include <string.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/display.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/pixdesc.h>
#include <libavutil/opt.h>
#include <libavutil/parseutils.h>
#include <string.h>

// Macros and compound literals Swift cannot import.
static inline int velvet_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int velvet_averror_eof(void) { return AVERROR_EOF; }
static inline int velvet_averror(int errnum) { return AVERROR(errnum); }
static inline void velvet_av_strerror(int errnum, char *buf, size_t size) { av_strerror(errnum, buf, size); }
static inline int64_t velvet_av_nopts_value(void) { return AV_NOPTS_VALUE; }

// AVFrame.data as the void** that av_audio_fifo and swresample take.
static inline void **velvet_frame_data_pointers(AVFrame *frame) { return (void **)frame->data; }
static inline const uint8_t **velvet_frame_const_data(const AVFrame *frame) { return (const uint8_t **)frame->data; }
static inline uint8_t **velvet_frame_mutable_data(AVFrame *frame) { return frame->data; }

// AVFrame.data / linesize are fixed arrays (tuples in Swift).
static inline uint8_t *velvet_frame_data(const AVFrame *frame, int plane) { return frame->data[plane]; }
static inline int velvet_frame_linesize(const AVFrame *frame, int plane) { return frame->linesize[plane]; }

// Makes `buffer` (a reference the frame takes over, e.g. from an AVBufferPool) plane `plane`
// of `frame`, with `linesize` bytes per row.
static inline void velvet_frame_set_plane(AVFrame *frame, int plane, AVBufferRef *buffer, int linesize) {
    frame->buf[plane] = buffer;
    frame->data[plane] = buffer->data;
    frame->linesize[plane] = linesize;
    frame->extended_data = frame->data;
}

// The stream's display matrix (nine 16.16/2.30 fixed-point values) into `out`; 0 when absent.
static inline int velvet_stream_display_matrix(const AVStream *stream, int32_t out[9]) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!matrix || size < 9 * sizeof(int32_t)) return 0;
    memcpy(out, matrix, 9 * sizeof(int32_t));
    return 1;
}

// Adds a copy of `size` bytes of side data of `type` to `stream`.
static inline int velvet_add_stream_side_data(AVStream *stream, enum AVPacketSideDataType type, const void *data, size_t size) {
    uint8_t *copy = av_stream_new_side_data(stream, type, size);
    if (!copy) return AVERROR(ENOMEM);
    memcpy(copy, data, size);
    return 0;
}

// Copies the display matrix of `from` onto `to` (the output keeps the input's orientation).
static inline int velvet_copy_display_matrix(const AVStream *from, AVStream *to) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(from, AV_PKT_DATA_DISPLAYMATRIX, &size);
    return matrix ? velvet_add_stream_side_data(to, AV_PKT_DATA_DISPLAYMATRIX, matrix, size) : 0;
}

// Copies the chapters of `from` onto `to` (before its header is written).
static inline int velvet_copy_chapters(const AVFormatContext *from, AVFormatContext *to) {
    for (unsigned i = 0; i < from->nb_chapters; i++) {
        const AVChapter *source = from->chapters[i];
        AVChapter *copy = av_mallocz(sizeof(*copy));
        if (!copy) return AVERROR(ENOMEM);
        copy->id = source->id;
        copy->time_base = source->time_base;
        copy->start = source->start;
        copy->end = source->end;
        if (av_dict_copy(&copy->metadata, source->metadata, 0) < 0 ||
            av_dynarray_add_nofree(&to->chapters, (int *)&to->nb_chapters, copy) < 0) {
            av_dict_free(&copy->metadata);
            av_free(copy);
            return AVERROR(ENOMEM);
        }
    }
    return 0;
}

// The codec tag for `a`, `b`, `c`, `d` (MKTAG).
static inline unsigned velvet_fourcc(char a, char b, char c, char d) { return MKTAG(a, b, c, d); }
#endif
