#include "COpenSSLShims.h"

long harrec_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

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

int harrec_SSL_add1_chain_cert(SSL *ssl, X509 *certificate) {
    return (int)SSL_add1_chain_cert(ssl, certificate);
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
