/*
 * report_grid.c - what every layout of report.c and report_aim7.c formats with
 * (report_internal.h): the grid of cells and its column widths, padding,
 * number formats, which rows belong to one point or one table, a table's
 * title and the LKP fail:runs columns.
 */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "strutil.h"

/* ---- small formatting helpers ---- */

void grid_init(struct grid *g, size_t ncols)
{
	g->ncols = ncols;
	g->nrows = 0;
	g->cells = NULL;
}

size_t grid_add_row(struct grid *g)
{
	g->cells = strutil_xreallocarray(g->cells, (g->nrows + 1) * g->ncols, sizeof(char *));
	for (size_t c = 0; c < g->ncols; c++)
		g->cells[g->nrows * g->ncols + c] = NULL;
	return g->nrows++;
}

void grid_set(struct grid *g, size_t row, size_t col, const char *fmt, ...)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strutil_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(g->cells[row * g->ncols + col]);
	g->cells[row * g->ncols + col] = strutil_buf_detach(&sb);
}

const char *grid_get(const struct grid *g, size_t row, size_t col)
{
	const char *s = g->cells[row * g->ncols + col];
	return s ? s : "";
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

size_t grid_width(const struct grid *g, size_t col, size_t min)
{
	size_t w = min;
	for (size_t r = 0; r < g->nrows; r++) {
		size_t n = text_width(grid_get(g, r, col));
		if (n > w)
			w = n;
	}
	return w;
}

void grid_release(struct grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cells[i]);
	free(g->cells);
	g->cells = NULL;
	g->nrows = 0;
}

void rep_pad(FILE *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(' ', out);
}

void rep_put_left(FILE *out, const char *s, size_t w)
{
	size_t n = text_width(s);
	fputs(s, out);
	if (n < w)
		rep_pad(out, w - n);
}

void rep_put_right(FILE *out, const char *s, size_t w)
{
	size_t n = text_width(s);
	if (n < w)
		rep_pad(out, w - n);
	fputs(s, out);
}

void rep_put_repeat(FILE *out, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(c, out);
}

/* 13943.4 -> "13,943"; rounds to an integer. */
static void fmt_thousands(double v, char *buf, size_t len)
{
	char digits[64];
	size_t n, o = 0;
	const char *d = digits;

	snprintf(digits, sizeof(digits), "%.0f", fabs(v) < 1e30 ? v : (v < 0 ? -1e30 : 1e30));
	if (*d == '-') {
		if (strcmp(d, "-0") == 0)
			d++;
		else if (o + 1 < len)
			buf[o++] = *d++;
	}
	n = strlen(d);
	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (i && (n - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

/* AIM7 cell: "13,943 JPM"; small figures keep decimals. */
void rep_fmt_aim7_value(double v, const char *unit, char *buf, size_t len)
{
	char num[64];

	if (fabs(v) >= 100)
		fmt_thousands(v, num, sizeof(num));
	else
		snprintf(num, sizeof(num), "%.4g", v);
	if (unit && *unit)
		snprintf(buf, len, "%s %s", num, unit);
	else
		snprintf(buf, len, "%s", num);
}

/* LKP and text cells: plain digits, no separators. */
void rep_fmt_plain(double v, char *buf, size_t len)
{
	if (fabs(v) >= 1e10)
		snprintf(buf, len, "%.4g", v);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* perf-bench cells: "%.4f" as perf prints ms; large figures (ops/s) as integers. */
void rep_fmt_perf(double v, char *buf, size_t len)
{
	if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4f", v);
}

bool rep_lockup_only(const struct compare_row *r)
{
	return r->base.n == 0 && r->patched.n == 0;
}

bool rep_same_point(const struct compare_row *a, const struct compare_row *b)
{
	return strcmp(a->workload, b->workload) == 0 && strcmp(a->lock, b->lock) == 0 &&
	       strcmp(a->params_key, b->params_key) == 0;
}

bool rep_same_table(const struct compare_row *a, const struct compare_row *b)
{
	return strcmp(a->workload, b->workload) == 0 && strcmp(a->lock, b->lock) == 0 &&
	       strcmp(a->metric, b->metric) == 0;
}

/* "users" when the point is counted in users (AIM7), else "threads". */
const char *rep_users_word(const struct compare_row *r)
{
	const char *k = r->params_key;
	for (const char *s = k; (s = strstr(s, "users=")) != NULL; s++)
		if (s == k || s[-1] == ',')
			return "users";
	return "threads";
}

void rep_title(FILE *out, const struct compare_row *r)
{
	const char *control = r->control ? " (control)" : "";

	if (r->unit && *r->unit)
		fprintf(out, "%s %s%s: %s (%s)\n", r->workload, r->lock, control, r->metric,
		        r->unit);
	else
		fprintf(out, "%s %s%s: %s\n", r->workload, r->lock, control, r->metric);
}

int rep_finish(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

/* One LKP fail:runs line's three columns: "  :1   100%   5:5" (no newline). */
void rep_put_fail_runs(FILE *out, int base_fail, int base_runs, int patched_fail, int patched_runs)
{
	char bf[48], pf[48], rep[32];
	if (base_fail)
		snprintf(bf, sizeof(bf), "%d:%d", base_fail, base_runs);
	else
		snprintf(bf, sizeof(bf), ":%d", base_runs);
	if (patched_fail)
		snprintf(pf, sizeof(pf), "%d:%d", patched_fail, patched_runs);
	else
		snprintf(pf, sizeof(pf), ":%d", patched_runs);
	double fb = base_runs ? (double)base_fail / base_runs : 0;
	double fp = patched_runs ? (double)patched_fail / patched_runs : 0;
	snprintf(rep, sizeof(rep), "%.0f%%", (fp - fb) * 100);
	rep_put_right(out, bf, 12);
	rep_put_right(out, rep, 15);
	rep_put_right(out, pf, 13);
}
