/*
 * ingest.c - bounds and read-back checks of a result document (ingest.h).
 */
#include "ingest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* 2^63: from here on jsonb prints a real as an integer jansson cannot read */
#define INGEST_REAL_LIMIT 9223372036854775808.0

/* The cap of a string value at path (a dotted path, [i] for array items). */
static size_t ingest_string_cap(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (strncmp(path, "machine.", 8) == 0)
		return INGEST_MAX_MACHINE;
	if (dot && strcmp(dot, ".stacks") == 0 && strncmp(path, "runs[", 5) == 0)
		return INGEST_MAX_STACKS;
	return INGEST_MAX_STRING;
}

static int ingest_walk(const json_t *v, char *path, size_t plen, size_t cap, char *err,
                       size_t errlen);

/* Walk item with path extended by seg ("[3]" or ".key"); path restored after. */
static int ingest_child(const json_t *item, char *path, size_t plen, size_t cap, const char *seg,
                        char *err, size_t errlen)
{
	size_t slen = strlen(seg);
	int rc;

	if (plen == 0 && seg[0] == '.') {
		seg++;
		slen--;
	}
	if (plen + slen >= cap) {
		snprintf(err, errlen, "%s: nested too deeply", path);
		return -1;
	}
	memcpy(path + plen, seg, slen + 1);
	rc = ingest_walk(item, path, plen + slen, cap, err, errlen);
	path[plen] = '\0';
	return rc;
}

static int ingest_walk(const json_t *v, char *path, size_t plen, size_t cap, char *err,
                       size_t errlen)
{
	char seg[INGEST_MAX_KEY + 2];
	const char *key;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_REAL:
		if (fabs(json_real_value(v)) >= INGEST_REAL_LIMIT) {
			snprintf(
			    err, errlen,
			    "%s: %.17g cannot be stored: jsonb keeps it as an integer of %.0f "
			    "digits, which does not read back as a number; magnitudes from 2^63 "
			    "on are refused",
			    path, json_real_value(v), floor(log10(fabs(json_real_value(v)))) + 1);
			return -1;
		}
		return 0;
	case JSON_STRING:
		if (json_string_length(v) > ingest_string_cap(path)) {
			snprintf(err, errlen, "%s: a string of %zu bytes, over the %zu allowed",
			         path, json_string_length(v), ingest_string_cap(path));
			return -1;
		}
		return 0;
	case JSON_ARRAY:
		json_array_foreach(v, i, item)
		{
			snprintf(seg, sizeof(seg), "[%zu]", i);
			if (ingest_child(item, path, plen, cap, seg, err, errlen) != 0)
				return -1;
		}
		return 0;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, item)
		{
			if (strlen(key) > INGEST_MAX_KEY) {
				snprintf(err, errlen, "%s: a key of %zu bytes, over the %d allowed",
				         plen ? path : "(top)", strlen(key), INGEST_MAX_KEY);
				return -1;
			}
			snprintf(seg, sizeof(seg), ".%s", key);
			if (ingest_child(item, path, plen, cap, seg, err, errlen) != 0)
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

int ingest_check_document(const json_t *doc, char *err, size_t errlen)
{
	char path[2048] = "";

	return ingest_walk(doc, path, 0, sizeof(path), err, errlen);
}
