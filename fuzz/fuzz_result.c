/*
 * fuzz_result.c - libFuzzer target: the result-document validator the
 * server's ingest runs on every POST /api/v1/jobs/{id}/results
 * (server/jobs.c): json_loadb with duplicate keys refused, then
 * result_from_json (lib/result.c, the schema) and
 * ingest_check_document (server/ingest.c, bounds and read-back).
 *
 * What both accept must also survive the way back: result_to_json of the
 * model gives a document that validates again.  A failure there aborts.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../server/ingest.h"
#include "result.h"

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
	if (result_from_json(doc, &res, err, sizeof(err)) != 0 ||
	    ingest_check_document(doc, err, sizeof(err)) != 0)
		goto out;
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
