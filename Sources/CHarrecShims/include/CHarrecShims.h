// C system headers that Swift's Glibc module does not export, plus one-line
// shims for function-like macros that Swift cannot import.
#ifndef CHARREC_SHIMS_H
#define CHARREC_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>

#include <zlib.h>
#include <brotli/decode.h>
#include <zstd.h>

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/bio.h>

/// inflateInit2 is a macro in zlib.h.
int harrec_inflateInit2(z_streamp strm, int windowBits);
/// deflateInit2 is a macro in zlib.h.
int harrec_deflateInit2(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy);

/// Sets O_NONBLOCK on a descriptor; fcntl is variadic and not callable from Swift.
int harrec_set_nonblocking(int fd);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; glibc declares accept4 only under _GNU_SOURCE.
int harrec_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length);

/// Installs SIGINT and SIGTERM handlers that add 1 to the eventfd `fd` (async-signal-safe), and
/// ignores SIGPIPE. The event loop reads the count: 1 = graceful stop, 2 or more = stop now.
int harrec_install_shutdown_signals(int fd);

/// The errno value of the calling thread.
int harrec_errno(void);

#endif
