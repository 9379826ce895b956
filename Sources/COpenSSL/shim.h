#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/params.h>

/* SHA-256 over a caller-owned state, for HMAC keys prepared once (HMACSHA256.Key copies the keyed state per tag,
   on the stack). OpenSSL 3.0 deprecates these for EVP, whose context copies allocate; the wrappers keep the
   deprecation in this one place. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline void qv_sha256_init(SHA256_CTX *context) { SHA256_Init(context); }
static inline void qv_sha256_update(SHA256_CTX *context, const void *bytes, size_t count) {
    SHA256_Update(context, bytes, count);
}
static inline void qv_sha256_final(unsigned char digest[SHA256_DIGEST_LENGTH], SHA256_CTX *context) {
    SHA256_Final(digest, context);
}
#pragma clang diagnostic pop
#endif
