/*
 * fuzz_report.c - libFuzzer target: the report renderer
 * (lib/report.c) behind `lockbench compare`, GET
 * .../report?format=... and the reply mail's tables.
 *
 * The input is one JSON object {"base": [doc, ...], "patched": [doc, ...]}
 * of lockbench-result/1 documents (or a single document on each side).
 * Documents the validator accepts are compared (compare.c) and the
 * comparison rendered in every format to /dev/null, with the lockup
 * sentences; the JSON format must parse back.  The reply mail's parts
 * that stand on a comparison alone (server/reply_table.c, through
 * reply_internal.h: the table, the stuck threads' top frames, prose
 * wrapping) are rendered too; the rest of the mail reads PostgreSQL.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/reply_internal.h"
#include "compare.h"
#include "report.h"
#include "result.h"

#define FUZZ_MAX_DOCS 8

/* Validate the documents of side (an array, or one object) into r; their count. */
static size_t fuzz_side(json_t *side, struct lb_result *r)
{
	char err[256];
	size_t n = 0, i;
	json_t *d;

	if (json_is_object(side)) {
		result_init(&r[0]);
		if (result_from_json(side, &r[0], err, sizeof(err)) == 0)
			return 1;
		result_release(&r[0]);
		return 0;
	}
	json_array_foreach(side, i, d)
	{
		if (n == FUZZ_MAX_DOCS)
			break;
		result_init(&r[n]);
		if (result_from_json(d, &r[n], err, sizeof(err)) == 0)
			n++;
		else
			result_release(&r[n]);
	}
	return n;
}

static void fuzz_render(const struct comparison *c)
{
	static const enum report_format fmts[] = {REPORT_AIM7, REPORT_PERF, REPORT_LKP,
	                                          REPORT_TEXT};
	char *text = NULL, *s;
	size_t len = 0;
	FILE *f;
	json_error_t jerr;
	json_t *back;

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		f = open_memstream(&text, &len);
		if (!f)
			abort();
		report_render(c, fmts[i], f);
		fclose(f);
		free(text);
		text = NULL;
	}
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	if (report_render(c, REPORT_JSON, f) != 0)
		abort();
	fclose(f);
	back = json_loadb(text, len, 0, &jerr);
	if (!back) {
		fprintf(stderr, "fuzz_report: --format json is not JSON: %s\n", jerr.text);
		abort();
	}
	json_decref(back);
	free(text);
	s = report_lockup_sentences(c);
	/* the reply mail's pieces */
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	struct stored_comparison sc = {1, "x86_64-2cpu", true, *c};
	reply_table(f, &sc);
	reply_stacks(f, c);
	if (s)
		reply_wrap(f, s, 0, 2);
	fclose(f);
	free(text);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_result base[FUZZ_MAX_DOCS], patched[FUZZ_MAX_DOCS];
	size_t nb = 0, np = 0, i;
	struct comparison c;
	json_error_t jerr;
	json_t *doc;
	char err[256];

	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(doc))
		goto out;
	nb = fuzz_side(json_object_get(doc, "base"), base);
	np = fuzz_side(json_object_get(doc, "patched"), patched);
	if (nb && np) {
		comparison_init(&c);
		if (compare_results(base, nb, patched, np, NULL, &c, err, sizeof(err)) == 0)
			fuzz_render(&c);
		comparison_release(&c);
	}
	for (i = 0; i < nb; i++)
		result_release(&base[i]);
	for (i = 0; i < np; i++)
		result_release(&patched[i]);
out:
	json_decref(doc);
	return 0;
}
