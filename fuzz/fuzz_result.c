/*
 * fuzz_result.c - libFuzzer target: the result-document validator the
 * server's ingest runs on every POST /api/v1/jobs/{id}/results
 * (server/results.c): json_loadb with duplicate keys refused, then
 * result_from_json (lib/result_parse.c: the schema and its bounds, one
 * walk).
 *
 * What it accepts must keep the bounds (result.h), which a walk of the
 * whole tree here checks as an oracle, and survive the way back:
 * result_to_json of the model gives a document that validates again.  A
 * failure of either aborts.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

/* Whether v and all below it keep result.h's bounds (stacks: any key "stacks" or "lines"). */
static bool fuzz_bounded(const json_t *v, size_t cap)
{
	const char *key;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_REAL:
		return fabs(json_real_value(v)) < LB_REAL_LIMIT;
	case JSON_STRING:
		return json_string_length(v) <= cap;
	case JSON_ARRAY:
		json_array_foreach(v, i, item)
		{
			if (!fuzz_bounded(item, cap))
				return false;
		}
		return true;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, item)
		{
			bool big = !strcmp(key, "stacks") || !strcmp(key, "lines");

			if (strlen(key) > LB_MAX_KEY ||
			    !fuzz_bounded(item, big ? LB_MAX_STACKS : LB_MAX_STRING))
				return false;
		}
		return true;
	default:
		return true;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_result res, again;
	json_error_t jerr;
	json_t *doc, *back = NULL;
	char err[512];

	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return 0;
	result_init(&res);
	result_init(&again);
	if (result_from_json(doc, &res, err, sizeof(err)) != 0)
		goto out;
	if (!fuzz_bounded(doc, LB_MAX_STRING) ||
	    (json_object_get(doc, "machine") &&
	     !fuzz_bounded(json_object_get(doc, "machine"), LB_MAX_MACHINE))) {
		fprintf(stderr, "fuzz_result: a document over result.h's bounds was accepted\n");
		abort();
	}
	back = result_to_json(&res);
	if (!back) {
		fprintf(stderr, "fuzz_result: a valid document cannot be written back\n");
		abort();
	}
	if (result_from_json(back, &again, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_result: written back, it no longer validates: %s\n", err);
		abort();
	}
out:
	result_release(&again);
	result_release(&res);
	json_decref(back);
	json_decref(doc);
	return 0;
}
