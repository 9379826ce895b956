#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 is a macro (it passes the library version and the stream's size), which Swift cannot call.
// windowBits 15 + 16 asks zlib for the gzip wrapper (RFC 1952) instead of zlib's own.
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

// The same for inflateInit2 (tests read gzip bodies back with it): 15 + 16 accepts the gzip wrapper only.
static inline int czlib_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
