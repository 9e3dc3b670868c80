#include "CNghttp2Shims.h"

const char *harrec_nghttp2_version(void) {
    nghttp2_info *info = nghttp2_version(0);
    return info ? info->version_str : "?";
}
