/*
 * bycommit.c - a job's prefixes against its base, printed as a column per
 * commit (bycommit.h).
 */
#include "bycommit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "verdicts.h"

int bycommit_load(PGconn *c, long long job_id, struct bycommit *x)
{
	char idbuf[24], err[256];
	const char *p[1] = {idbuf};

	memset(x, 0, sizeof(*x));
	snprintf(idbuf, sizeof(idbuf), "%lld", job_id);
	PGresult *v = db_exec(c,
	                      "SELECT variant FROM results WHERE job_id = $1 AND variant ~ "
	                      "'^patch-[0-9]+$' GROUP BY variant ORDER BY length(variant), variant",
	                      1, p);
	if (!v)
		return db_failure();
	for (int k = 0; k < PQntuples(v) && x->n < BYCOMMIT_MAX; k++) {
		struct comparison *cmp = &x->cmp[x->n];
		comparison_init(cmp);
		snprintf(x->name[x->n], sizeof(x->name[0]), "%s", PQgetvalue(v, k, 0));
		int rc = verdicts_compute_variant(c, job_id, x->name[x->n], cmp, err, sizeof(err));
		if (rc == DB_OK) {
			x->n++;
			continue;
		}
		comparison_release(cmp);
		if (rc == DB_FAIL || rc == DB_RETRY) {
			PQclear(v);
			return rc;
		}
		/* a prefix without a comparison (no documents, a bad one): no column */
	}
	PQclear(v);
	return DB_OK;
}

void bycommit_release(struct bycommit *x)
{
	for (size_t k = 0; k < x->n; k++)
		comparison_release(&x->cmp[k]);
	x->n = 0;
}

bool bycommit_row_shown(const struct compare_row *r)
{
	return r->verdict == VERDICT_REGRESSION || r->verdict == VERDICT_IMPROVEMENT ||
	       r->verdict == VERDICT_LOCKUP || r->significant || (r->headline && !r->control);
}

void bycommit_num(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (a >= 1e4)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

void bycommit_change(const struct compare_row *r, char *buf, size_t len)
{
	if (r && r->base.n && r->patched.n && r->base.mean != 0)
		snprintf(buf, len, "%+.1f%%%c", r->change * 100, r->significant ? '*' : ' ');
	else
		snprintf(buf, len, "- ");
}

static const struct compare_row *same_row(const struct comparison *c, const struct compare_row *r)
{
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *x = &c->rows[i];
		if (!strcmp(x->workload, r->workload) && !strcmp(x->lock, r->lock) &&
		    !strcmp(x->metric, r->metric) && !strcmp(x->params_key, r->params_key))
			return x;
	}
	return NULL;
}

void bycommit_print(FILE *f, const struct comparison *cmp, const struct bycommit *x,
                    int max_columns)
{
	char line[256], cell[32], name[512];
	size_t shown = 0;

	for (size_t i = 0; x && i < cmp->nrows; i++)
		shown += bycommit_row_shown(&cmp->rows[i]) && !cmp->rows[i].control;
	if (!x || !x->n || !shown)
		return;
	fputs("\nby commit: each prefix's change against the base, by its own test\n", f);
	int w = snprintf(line, sizeof(line), "%11s", "base");
	for (size_t k = 0; k < x->n; k++)
		w += snprintf(line + w, sizeof(line) - (size_t)w, "%11s", x->name[k]);
	fprintf(f, "%s%11s  metric\n", line, "patched");
	for (size_t i = 0; i < cmp->nrows; i++) {
		const struct compare_row *r = &cmp->rows[i];
		if (!bycommit_row_shown(r) || r->control)
			continue;
		if (r->base.n)
			bycommit_num(r->base.mean, cell, sizeof(cell));
		else
			snprintf(cell, sizeof(cell), "-");
		w = snprintf(line, sizeof(line), "%11s", cell);
		for (size_t k = 0; k < x->n; k++) {
			bycommit_change(same_row(&x->cmp[k], r), cell, sizeof(cell));
			w += snprintf(line + w, sizeof(line) - (size_t)w, "%11s", cell);
		}
		bycommit_change(r, cell, sizeof(cell));
		w += snprintf(line + w, sizeof(line) - (size_t)w, "%11s  ", cell);
		int nw = snprintf(name, sizeof(name), "%s.%s.%s%s%s", r->workload, r->lock,
		                  r->metric, *r->params_key ? "." : "", r->params_key);
		if (w + nw > max_columns)
			fprintf(f, "  %.*s\n%.*s\n", max_columns - 2, name, w - 2, line);
		else
			fprintf(f, "%s%s\n", line, name);
	}
	fputs("*: significant against the base, as in the table above\n", f);
}
