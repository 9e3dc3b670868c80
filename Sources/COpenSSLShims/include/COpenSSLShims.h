// OpenSSL 3 headers and one-line shims for its function-like macros (the TLS module).
#ifndef COPENSSLSHIMS_H
#define COPENSSLSHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/bio.h>

/// SSL_CTX_set_session_cache_mode is a macro.
long harrec_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);

/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);

/// SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);

/// Sets SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION (SSL_OP_* are macros); returns the new options.
uint64_t harrec_SSL_CTX_set_proxy_options(SSL_CTX *ctx);

/// SSL_CTX_set_tlsext_servername_callback is a macro over SSL_CTX_callback_ctrl. Returns 1 on success.
int harrec_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*callback)(SSL *ssl, int *alert, void *arg));

/// SSL_add1_chain_cert is a macro over SSL_ctrl: appends `certificate` (reference counted) to the
/// chain this connection sends after its leaf. Returns 1 on success.
int harrec_SSL_add1_chain_cert(SSL *ssl, X509 *certificate);

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

#endif
