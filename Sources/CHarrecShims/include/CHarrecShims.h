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
#include <libdeflate.h>

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
/// SIGINT, SIGTERM and SIGHUP each write 1 to `fd` (an eventfd) and count themselves.
int harrec_install_shutdown_signals(int fd);
/// How many of those signals arrived so far.
unsigned long harrec_shutdown_signals_received(void);

/// SSL_CTX_set_session_cache_mode is a macro.
long harrec_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);

/// The errno value of the calling thread.
int harrec_errno(void);

// ---- OpenSSL 3.0 function-like macros (TLS module) ----

/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
/// SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
/// Sets SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION (SSL_OP_* are macros); returns the new options.
uint64_t harrec_SSL_CTX_set_proxy_options(SSL_CTX *ctx);
/// SSL_CTX_set_tlsext_servername_callback is a macro over SSL_CTX_callback_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*callback)(SSL *ssl, int *alert, void *arg));
/// SSL_CTX_set_tlsext_servername_arg is a macro over SSL_CTX_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg);
/// SSL_set_tlsext_host_name (client SNI) is a macro over SSL_ctrl. Returns 1 on success.
int harrec_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
/// BIO_get_mem_data is a macro over BIO_ctrl: points *data at the buffer, returns its length.
long harrec_BIO_get_mem_data(BIO *bio, char **data);
/// BIO_set_mem_eof_return is a macro over BIO_ctrl; -1 makes an empty memory BIO "retry", not EOF.
long harrec_BIO_set_mem_eof_return(BIO *bio, int value);
/// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen (curve name such as "P-256").
EVP_PKEY *harrec_EVP_EC_gen(const char *curve);
/// EVP_RSA_gen is a macro over the variadic EVP_PKEY_Q_keygen.
EVP_PKEY *harrec_EVP_RSA_gen(unsigned int bits);
/// sk_GENERAL_NAME_new_null is a macro (type-safe stack).
GENERAL_NAMES *harrec_sk_GENERAL_NAME_new_null(void);
/// sk_GENERAL_NAME_push is a macro. Returns the new count, 0 on failure.
int harrec_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name);
/// sk_GENERAL_NAME_num is a macro.
int harrec_sk_GENERAL_NAME_num(const GENERAL_NAMES *names);
/// sk_GENERAL_NAME_value is a macro.
GENERAL_NAME *harrec_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index);
/// Adds an extension given in openssl.cnf syntax (e.g. "critical,CA:TRUE,pathlen:0") to `cert`,
/// with `issuer` as the issuer for authorityKeyIdentifier (X509V3_set_ctx_nodb is a macro).
/// Returns 1 on success.
int harrec_X509_add_ext_conf(X509 *cert, X509 *issuer, int nid, const char *value);
/// ERR_GET_LIB is a macro/inline in err.h.
int harrec_ERR_GET_LIB(unsigned long code);
/// ERR_GET_REASON is a macro/inline in err.h.
int harrec_ERR_GET_REASON(unsigned long code);
/// OPENSSL_free is a macro over CRYPTO_free.
void harrec_OPENSSL_free(void *pointer);

/// Makes malloc keep freed memory for reuse (large mmap threshold, no trimming) for a
/// short-lived batch job, so freed buffers are not faulted in again. mallopt's constants are
/// macros.
void harrec_retain_freed_memory(void);

/// Names a thread for ps/top and /proc (pthread_setname_np is a GNU extension: at most 15
/// characters). Returns 0 or an errno value.
int harrec_set_thread_name(unsigned long thread, const char *name);

/// Starts writeback of a file range without waiting (sync_file_range SYNC_FILE_RANGE_WRITE, a
/// GNU extension), so the final fsync of a large file has little left to wait for.
int harrec_start_writeback(int fd, long long offset, long long length);

#endif
