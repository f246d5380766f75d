/*
 * ingest.h - what the server asks of a result document beyond its schema
 * (docs/result-schema.md) before storing it as jsonb: that it reads back as
 * it was checked, and that no string in it is unbounded.
 *
 * Numbers: PostgreSQL's jsonb keeps numbers as numeric and prints a real
 * written with an exponent in plain digits, so 1e19 comes back as the
 * integer 10000000000000000000, which jansson (and so every later
 * comparison) refuses ("too big integer").  A real of magnitude 2^63 or
 * more is therefore refused at the door; everything else (2^53, -0.0, the
 * subnormals, 1e18) reads back as the same double.
 *
 * Strings: every string at most INGEST_MAX_STRING bytes, the machine's
 * fields INGEST_MAX_MACHINE, a lockup's stacks INGEST_MAX_STACKS; object
 * keys INGEST_MAX_KEY.
 */
#ifndef LOCKLAB_SERVER_INGEST_H
#define LOCKLAB_SERVER_INGEST_H

#include <jansson.h>
#include <stddef.h>

#define INGEST_MAX_KEY     256
#define INGEST_MAX_STRING  4096
#define INGEST_MAX_MACHINE 256
#define INGEST_MAX_STACKS  (1024 * 1024)

/*
 * 0 when doc (borrowed) may be stored, else -1 with the path and the reason
 * in err ("runs[0].samples.ops_per_sec[2]: 1e+19 ...").
 */
int ingest_check_document(const json_t *doc, char *err, size_t errlen);

#endif
