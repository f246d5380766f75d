/*
 * sha256.h - SHA-256 of a buffer as hex (sha256.c, over nettle).
 */
#ifndef LOCKLAB_SHA256_H
#define LOCKLAB_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256 of data as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
