// libnghttp2 (the HTTP/2 library behind curl and nginx) for the HTTP2 module. Its session API
// is sans-IO already: bytes in with nghttp2_session_mem_recv, bytes out with
// nghttp2_session_mem_send, callbacks in between.
#ifndef CNGHTTP2SHIMS_H
#define CNGHTTP2SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <nghttp2/nghttp2.h>

/// The library's version string ("1.52.0"), from the library actually linked.
const char *harrec_nghttp2_version(void);

#endif
