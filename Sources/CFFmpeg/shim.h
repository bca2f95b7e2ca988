#ifndef VELVET_CFFMPEG_SHIM_H
#define VELVET_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#include <libavutil/opt.h>

// Macros and compound literals Swift cannot import.
static inline int velvet_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int velvet_averror_eof(void) { return AVERROR_EOF; }
static inline int velvet_averror(int errnum) { return AVERROR(errnum); }
static inline void velvet_av_strerror(int errnum, char *buf, size_t size) { av_strerror(errnum, buf, size); }
static inline int64_t velvet_av_nopts_value(void) { return AV_NOPTS_VALUE; }
#endif
