// zlib, brotli, zstd and libdeflate headers, and the zlib macros Swift cannot import:
// content decoding (Codecs) and permessage-deflate (WebSocket).
#ifndef CCOMPRESSIONSHIMS_H
#define CCOMPRESSIONSHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>
#include <brotli/decode.h>
#include <zstd.h>
#include <libdeflate.h>

/// inflateInit2 is a macro in zlib.h.
int harrec_inflateInit2(z_streamp strm, int windowBits);

/// deflateInit2 is a macro in zlib.h.
int harrec_deflateInit2(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy);

#endif
