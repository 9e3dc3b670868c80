#define _GNU_SOURCE
#include "CHarrecShims.h"
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <string.h>
#include <pthread.h>

int harrec_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

int harrec_deflateInit2(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

int harrec_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int harrec_errno(void) { return errno; }

int harrec_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static volatile int harrec_signal_fd = -1;
static _Atomic unsigned long harrec_signal_total = 0;

unsigned long harrec_shutdown_signals_received(void) { return harrec_signal_total; }

static void harrec_shutdown_handler(int signo) {
    (void)signo;
    int saved = errno;
    harrec_signal_total++;
    uint64_t one = 1;
    if (harrec_signal_fd >= 0) {
        ssize_t ignored = write(harrec_signal_fd, &one, sizeof one);
        (void)ignored;
    }
    errno = saved;
}

int harrec_install_shutdown_signals(int fd) {
    harrec_signal_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = harrec_shutdown_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &action, NULL) != 0) return -1;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    // A closed terminal: stop and write the HAR, as for Ctrl-C (by default it kills the process).
    if (sigaction(SIGHUP, &action, NULL) != 0) return -1;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

// ---- OpenSSL 3.0 function-like macros (TLS module) ----

int harrec_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

int harrec_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

uint64_t harrec_SSL_CTX_set_proxy_options(SSL_CTX *ctx) {
    return SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
}

int harrec_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*callback)(SSL *ssl, int *alert, void *arg)) {
    return (int)SSL_CTX_set_tlsext_servername_callback(ctx, callback);
}

int harrec_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg) {
    return (int)SSL_CTX_set_tlsext_servername_arg(ctx, arg);
}

int harrec_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

long harrec_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

long harrec_BIO_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}

EVP_PKEY *harrec_EVP_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
}

EVP_PKEY *harrec_EVP_RSA_gen(unsigned int bits) {
    return EVP_RSA_gen(bits);
}

GENERAL_NAMES *harrec_sk_GENERAL_NAME_new_null(void) {
    return sk_GENERAL_NAME_new_null();
}

int harrec_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name) {
    return sk_GENERAL_NAME_push(names, name);
}

int harrec_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) {
    return sk_GENERAL_NAME_num(names);
}

GENERAL_NAME *harrec_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) {
    return sk_GENERAL_NAME_value(names, index);
}

int harrec_X509_add_ext_conf(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (extension == NULL) return 0;
    int ok = X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
    return ok;
}

int harrec_ERR_GET_LIB(unsigned long code) { return ERR_GET_LIB(code); }

int harrec_ERR_GET_REASON(unsigned long code) { return ERR_GET_REASON(code); }

void harrec_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

long harrec_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

void harrec_retain_freed_memory(void) {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int harrec_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
}

int harrec_set_thread_name(unsigned long thread, const char *name) {
    return pthread_setname_np((pthread_t)thread, name);
}
