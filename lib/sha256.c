/*
 * sha256.c - SHA-256 of a buffer as hex: nettle computes the digest, this
 * file only spells it.  Every program links it (tokens, images).
 */
#include "sha256.h"

#include <nettle/sha2.h>

void sha256_hex(const void *data, size_t len, char out[65])
{
	static const char digits[] = "0123456789abcdef";
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, sizeof(digest), digest);
	for (size_t i = 0; i < sizeof(digest); i++) {
		out[2 * i] = digits[digest[i] >> 4];
		out[2 * i + 1] = digits[digest[i] & 15];
	}
	out[64] = '\0';
}
