/*
 * report.c - the tables locking developers post, rendered from a comparison: AIM7 bands
 * of users, the perf-bench grid, the LKP %change block with fail:runs, a
 * plain text table and JSON.  Every layout states the samples behind each
 * row and marks significant rows with "*".
 */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

/* ---- small formatting helpers ---- */

/* A table of strings: cells[row * ncols + col], built before widths are known. */
struct grid {
	size_t ncols;
	size_t nrows;
	char **cells;
};

static void grid_init(struct grid *g, size_t ncols)
{
	g->ncols = ncols;
	g->nrows = 0;
	g->cells = NULL;
}

static size_t grid_add_row(struct grid *g)
{
	g->cells = strutil_xreallocarray(g->cells, (g->nrows + 1) * g->ncols, sizeof(char *));
	for (size_t c = 0; c < g->ncols; c++)
		g->cells[g->nrows * g->ncols + c] = NULL;
	return g->nrows++;
}

static void grid_set(struct grid *g, size_t row, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void grid_set(struct grid *g, size_t row, size_t col, const char *fmt, ...)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strutil_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(g->cells[row * g->ncols + col]);
	g->cells[row * g->ncols + col] = strutil_buf_detach(&sb);
}

static const char *grid_get(const struct grid *g, size_t row, size_t col)
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

static size_t grid_width(const struct grid *g, size_t col, size_t min)
{
	size_t w = min;
	for (size_t r = 0; r < g->nrows; r++) {
		size_t n = text_width(grid_get(g, r, col));
		if (n > w)
			w = n;
	}
	return w;
}

static void grid_release(struct grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cells[i]);
	free(g->cells);
	g->cells = NULL;
	g->nrows = 0;
}

static void pad(FILE *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(' ', out);
}

static void put_left(FILE *out, const char *s, size_t w)
{
	size_t n = text_width(s);
	fputs(s, out);
	if (n < w)
		pad(out, w - n);
}

static void put_right(FILE *out, const char *s, size_t w)
{
	size_t n = text_width(s);
	if (n < w)
		pad(out, w - n);
	fputs(s, out);
}

static void put_repeat(FILE *out, char c, size_t n)
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
static void fmt_aim7_value(double v, const char *unit, char *buf, size_t len)
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
static void fmt_plain(double v, char *buf, size_t len)
{
	if (fabs(v) >= 1e10)
		snprintf(buf, len, "%.4g", v);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* perf-bench cells: "%.4f" as perf prints ms; large figures (ops/s) as integers. */
static void fmt_perf(double v, char *buf, size_t len)
{
	if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4f", v);
}

static bool lockup_only(const struct compare_row *r)
{
	return r->base.n == 0 && r->patched.n == 0;
}

static bool same_point(const struct compare_row *a, const struct compare_row *b)
{
	return strcmp(a->workload, b->workload) == 0 && strcmp(a->lock, b->lock) == 0 &&
	       strcmp(a->params_key, b->params_key) == 0;
}

static bool same_table(const struct compare_row *a, const struct compare_row *b)
{
	return strcmp(a->workload, b->workload) == 0 && strcmp(a->lock, b->lock) == 0 &&
	       strcmp(a->metric, b->metric) == 0;
}

/* "users" when the point is counted in users (AIM7), else "threads". */
static const char *users_word(const struct compare_row *r)
{
	const char *k = r->params_key;
	for (const char *s = k; (s = strstr(s, "users=")) != NULL; s++)
		if (s == k || s[-1] == ',')
			return "users";
	return "threads";
}

const char report_emulated_note[] =
    "emulated: timing from an emulated CPU (QEMU TCG): lockups, splats and locktorture failures "
    "are real; compare figures only within this run";

bool report_emulated(const struct comparison *c)
{
	return c->machine.model && strstr(c->machine.model, "QEMU TCG");
}

const char report_thresholds_lead[] = "emulated: guest kernel lockup thresholds: ";

bool report_emulated_thresholds(const struct comparison *c, char *out, size_t len)
{
	if (len)
		out[0] = 0;
	if (!report_emulated(c) || !c->machine.guest_thresholds || !len)
		return false;
	snprintf(out, len, "%s%s", report_thresholds_lead, c->machine.guest_thresholds);
	return true;
}

void report_legend_test(FILE *out, const struct comparison *c, const char *lead, size_t lo,
                        size_t hi)
{
	size_t nlog = 0, nraw = 0;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		if (r->pairs < COMPARE_MIN_PAIRS || lockup_only(r))
			continue;
		if (r->log_ratio)
			nlog++;
		else
			nraw++;
	}
	if (!hi)
		return;
	fprintf(out, "%s: paired t-test of %s of the round means, over the ", lead,
	        nlog ? "ln(patched/base)" : "the differences");
	if (lo == hi)
		fprintf(out, "%zu rounds both sides ran\n", hi);
	else
		fprintf(out, "%zu-%zu rounds both sides ran\n", lo, hi);
	if (nlog)
		fputs("change: the geometric mean of the round ratios; its interval exp(ci) - 1\n",
		      out);
	if (nlog && nraw)
		fprintf(out, "raw differences where a round mean is <= 0: %zu row%s\n", nraw,
		        nraw == 1 ? "" : "s");
}

/* "+-3%": the row's equivalence margin, printed beside its change. */
static void fmt_margin(const struct compare_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "\xc2\xb1%g%%", r->margin * 100);
}

bool report_note_text(const struct compare_row *r, char *buf, size_t len)
{
	bool ins = !strcmp(r->metric, "instructions_per_pair");
	double d;

	*buf = 0;
	if (!compare_row_is_note(r) || !r->base.n || !r->patched.n)
		return false;
	d = r->patched.mean - r->base.mean;
	if (d == 0)
		snprintf(buf, len, "unchanged, %.6g", r->base.mean);
	else
		snprintf(buf, len, "%+.4g%s, %.6g -> %.6g", d,
		         !ins           ? ""
		         : fabs(d) == 1 ? " instruction a pair"
		                        : " instructions a pair",
		         r->base.mean, r->patched.mean);
	return true;
}

/*
 * Which instrument measured the row: timed, duet or lockstep (some or all
 * runs), instructions.
 */
static const char *row_instrument(const struct compare_row *r)
{
	if (!strcmp(r->metric, "instructions_per_pair"))
		return LB_INSTRUMENT_INSTRUCTIONS;
	if (r->duet_runs && r->duet_runs == r->measured_runs)
		return LB_INSTRUMENT_DUET;
	if (r->lockstep_runs && r->lockstep_runs == r->measured_runs)
		return LB_INSTRUMENT_LOCKSTEP;
	if (r->lockstep_runs)
		return "lockstep+timed";
	return r->duet_runs ? "duet+timed" : LB_INSTRUMENT_TIMED;
}

/*
 * The legend's lines on duets, lockstep runs and on samples taken again for disturbance;
 * nothing about disturbance when no document recorded it (older ones).
 */
static void legend_noise(FILE *out, const struct comparison *c)
{
	size_t duet = 0, lockstep = 0, recorded = 0, touched = 0;
	long repeated = 0;
	double limit = 0;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		duet += r->duet_runs > 0;
		lockstep += r->lockstep_runs > 0;
		if (!r->disturb_runs)
			continue;
		recorded++;
		repeated += r->repeated;
		touched += r->repeated > 0;
		limit = r->disturb_limit_pct > limit ? r->disturb_limit_pct : limit;
	}
	if (duet)
		fprintf(out,
		        "duet: %zu row(s) measured base and patched at the same time, each pinned "
		        "to its own CPU, started together (the pair shares the machine's noise)\n",
		        duet);
	if (lockstep)
		fprintf(
		    out,
		    "lockstep: %zu row(s) measured base and patched in turns of %g ms on one "
		    "CPU (%g ms on every CPU for hot; past 2 threads a CPU, %g ms a thread per "
		    "CPU, at most %g), each side timing only its own turns (the pair shares the "
		    "machine's modes)\n",
		    lockstep, LB_LOCKSTEP_SLICE_MS, LB_LOCKSTEP_HOT_SLICE_MS,
		    LB_LOCKSTEP_HOT_SLICE_MS, LB_LOCKSTEP_HOT_SLICE_MAX_MS);
	if (recorded && limit > 0)
		fprintf(out,
		        "disturbance: %ld sample(s) of %zu row(s) taken again because their thread "
		        "lost more than %g%% of its time (steal, run queue); %zu row(s) recorded\n",
		        repeated, touched, limit, recorded);
	else if (recorded)
		fprintf(out,
		        "disturbance: recorded for %zu row(s) (steal, run queue, switches, "
		        "migrations), no sample taken again\n",
		        recorded);
}

/*
 * The legend's lines on how rows were tested and which instrument measured
 * them (compare.c decides; this only says how).
 */
static void legend_tests(FILE *out, const struct comparison *c)
{
	size_t lo = 0, hi = 0, few = 0, counted = 0;

	char th[1024];
	if (report_emulated(c))
		fprintf(out, "%s\n", report_emulated_note);
	if (report_emulated_thresholds(c, th, sizeof(th)))
		fprintf(out, "%s\n", th);

	for (size_t i = 0; i < c->nrows; i++) {
		size_t k = c->rows[i].pairs;

		if (lockup_only(&c->rows[i]))
			continue;
		if (!strcmp(c->rows[i].metric, "instructions_per_pair"))
			counted++;
		if (k < COMPARE_MIN_PAIRS) {
			few++;
			continue;
		}
		lo = !lo || k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	report_legend_test(out, c, "p, q", lo, hi);
	if (few)
		fprintf(out,
		        "too few rounds to test: %zu row(s) with fewer than %d rounds both sides "
		        "ran get no verdict beyond inconclusive\n",
		        few, COMPARE_MIN_PAIRS);
	fprintf(out,
	        "change found: Benjamini-Hochberg over the deciding rows (headline, no control) "
	        "alone; controls and descriptive rows are a family of their own and decide "
	        "nothing; instruction counts are code-path notes in no family, deciding only "
	        "past %g%% beside a timed row not shown unchanged\n"
	        "no-change = equivalence (two one-sided paired t-tests): the change is inside "
	        "its margin (\xc2\xb1, beside each change), Benjamini-Hochberg over the deciding "
	        "rows (headline, no control) and over the rest apart, at q < %g%s\n",
	        COMPARE_NOTE_ESCALATE * 100,
	        c->opts.alpha / (c->opts.looks > 1 ? c->opts.looks : 1),
	        c->opts.looks > 1 ? " (alpha shared by the looks at the rounds)" : "");
	if (counted)
		fputs("instrument: instructions_per_pair is counted under valgrind (exact, "
		      "single-thread); every other row is timed\n",
		      out);
	else
		fputs("instrument: every row is timed (wall clock)\n", out);
	legend_noise(out, c);
}

static void legend(FILE *out, const struct comparison *c)
{
	fprintf(out,
	        "n = samples per side; * = significant after Benjamini-Hochberg at q < %g and "
	        "|change| >= %g%%\n",
	        c->opts.alpha, c->opts.min_effect * 100);
	legend_tests(out, c);
	if (c->opts.confirm_from > 0)
		fprintf(out,
		        "* also means confirmed: rounds 0-%d found the change and rounds %d and "
		        "later found it again on their own, the same way; p and q are those of "
		        "the stage with the larger q\n",
		        c->opts.confirm_from - 1, c->opts.confirm_from);
	if (c->identical_code)
		fprintf(out, "%s\n", report_identical_note(c));
	else if (comparison_has_controls(c))
		fputs("control = a lock the change did not touch: its rows are this machine's own "
		      "A/A "
		      "variation and decide nothing but a lockup\n",
		      out);
}

const char *report_identical_note(const struct comparison *c)
{
	static __thread char note[320];

	snprintf(note, sizeof(note),
	         "control = every row: base and patched ran one image (%.19s...), so the patch "
	         "changes no code the suite runs and these rows are this machine's own A/A; they "
	         "decide nothing but a lockup",
	         c->image ? c->image : "");
	return note;
}

static void title(FILE *out, const struct compare_row *r)
{
	const char *control = r->control ? " (control)" : "";

	if (r->unit && *r->unit)
		fprintf(out, "%s %s%s: %s (%s)\n", r->workload, r->lock, control, r->metric,
		        r->unit);
	else
		fprintf(out, "%s %s%s: %s\n", r->workload, r->lock, control, r->metric);
}

static int finish(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

/* One LKP fail:runs line's three columns: "  :1   100%   5:5" (no newline). */
static void put_fail_runs(FILE *out, int base_fail, int base_runs, int patched_fail,
                          int patched_runs)
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
	put_right(out, bf, 12);
	put_right(out, rep, 15);
	put_right(out, pf, 13);
}

/* ---- lockup sentences ---- */

static bool point_seen_before(const struct comparison *c, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (c->rows[k].verdict == VERDICT_LOCKUP && same_point(&c->rows[k], &c->rows[i]))
			return true;
	return false;
}

char *report_lockup_sentences(const struct comparison *c)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		if (r->verdict != VERDICT_LOCKUP || point_seen_before(c, i))
			continue;
		if (r->users >= 0)
			strutil_buf_addf(&sb, "at %lld %s, ", r->users, users_word(r));
		else if (*r->params_key)
			strutil_buf_addf(&sb, "at %s, ", r->params_key);
		if (r->patched_lockups && r->base_lockups)
			strutil_buf_add(&sb, "both the base and the patched build locked up");
		else if (r->patched_lockups)
			strutil_buf_add(&sb, "the patched build locked up");
		else
			strutil_buf_add(&sb, "the base build locked up");
		strutil_buf_addf(&sb, " on %s with %s", r->workload, r->lock);
		const char *msg = r->lockup_message ? r->lockup_message : "";
		size_t n = strlen(msg);
		while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
			n--;
		if (n) {
			strutil_buf_add(&sb, ": ");
			for (size_t k = 0; k < n; k++)
				strutil_buf_addch(
				    &sb, msg[k] == '\n' || msg[k] == '\r' ? ' ' : msg[k], 1);
		}
		if (!n || !strchr(".!?", msg[n - 1]))
			strutil_buf_add(&sb, ".");
		strutil_buf_add(&sb, "\n");
	}
	for (size_t i = 0; i < c->nsplats; i++) {
		const struct compare_splat *sp = &c->splats[i];
		if (!sp->new_in_patched)
			continue;
		strutil_buf_addf(
		    &sb, "the patched kernel reported %s in %d of %d runs%s%s, the base in none: ",
		    sp->key, sp->patched_fail, c->patched_rounds, sp->boot ? " at " : "",
		    sp->boot ? sp->boot : "");
		for (const char *m = sp->message; *m; m++)
			strutil_buf_addch(&sb, *m == '\n' || *m == '\r' ? ' ' : *m, 1);
		strutil_buf_add(&sb, "\n");
	}
	return strutil_buf_detach(&sb);
}

/* Up to max lines of text, indented, stopping at stop (when not NULL). */
static void put_lines(FILE *out, const char *l, int max, const char *stop)
{
	for (int k = 0; *l && k < max && l != stop; k++) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		fprintf(out, "  %.*s\n", (int)len, l);
		l = nl ? nl + 1 : l + len;
	}
}

/*
 * The fail:runs block of the splat keys, base against patched, then the
 * first lines of each report new in patched (up to its call trace).
 */
static void put_splats(FILE *out, const struct comparison *c)
{
	if (!c->nsplats)
		return;
	fputs("\nsplats (kernel checkers' reports), documents with the key:\n", out);
	fputs("     fail:runs  %reproduction    fail:runs\n", out);
	fputs("         |             |             |\n", out);
	for (size_t i = 0; i < c->nsplats; i++) {
		const struct compare_splat *sp = &c->splats[i];
		put_fail_runs(out, sp->base_fail, c->base_rounds, sp->patched_fail,
		              c->patched_rounds);
		fprintf(out, "   dmesg.%s%s\n", sp->key,
		        sp->new_in_patched                  ? "  (splat: new in patched)"
		        : sp->base_fail && sp->patched_fail ? "  (in both: not blamed)"
		                                            : "  (base only)");
	}
	for (size_t i = 0; i < c->nsplats; i++) {
		const struct compare_splat *sp = &c->splats[i];
		if (!sp->new_in_patched)
			continue;
		fprintf(out, "\n%s\n", sp->message);
		const char *l = sp->lines ? sp->lines : "";
		const char *trace = strstr(l, "Call Trace:");
		put_lines(out, l, 12, trace);
		if (trace) {
			fputs("  ...\n", out);
			put_lines(out, trace, 30, NULL);
		}
	}
}

static void put_sentences(FILE *out, const struct comparison *c)
{
	char *s = report_lockup_sentences(c);
	if (*s) {
		fputc('\n', out);
		fputs(s, out);
	}
	free(s);
}

/* ---- AIM7 ---- */

static bool aim7_metric(const char *m)
{
	return strcmp(m, "jpm") == 0 || strcmp(m, "ops_per_sec") == 0;
}

struct band {
	long long umin;
	long long umax;
	const char *label; /* params_key when the point has no users count */
	double sum_b, sum_p;
	size_t cnt_b, cnt_p;
	size_t min_nb, min_np;
	bool lockup;
	bool all_sig;  /* every point significant in the band's direction */
	double margin; /* the widest equivalence margin of the band's points */
	int sig_dir;   /* +1/-1 direction of the significant points, 0 mixed */
};

static int decade(long long u)
{
	int d = 0;
	while (u >= 10) {
		u /= 10;
		d++;
	}
	return d;
}

int report_aim7_band(long long users)
{
	if (users <= 0)
		return -1;
	if (users < 10)
		return 0;
	if (users <= 100)
		return 1;
	return decade(users - 1);
}

/*
 * One row of an AIM7 table without its newline: "| cell " per column of
 * width w[i], figures (fig[i]) right-aligned as "|  1,234 JPM   ", then "|".
 */
static void put_aim7_cells(FILE *out, const struct grid *g, size_t r, const size_t *w,
                           const bool *fig, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fig[i]) {
			fputs("|  ", out);
			put_right(out, grid_get(g, r, i), w[i] - 5);
			fputs("   ", out);
		} else {
			fputs("| ", out);
			put_left(out, grid_get(g, r, i), w[i] - 1);
		}
	}
	fputc('|', out);
}

static void render_aim7_table(FILE *out, const struct comparison *c, size_t from, size_t to)
{
	struct band *bands = strutil_xcalloc(to - from, sizeof(*bands));
	size_t nb = 0;
	struct grid g;
	const struct compare_row *first = &c->rows[from];

	for (size_t i = from; i < to; i++) {
		const struct compare_row *r = &c->rows[i];
		struct band *b = nb ? &bands[nb - 1] : NULL;
		if (lockup_only(r))
			continue;
		if (!b || r->users < 0 || b->umin < 0 ||
		    report_aim7_band(r->users) != report_aim7_band(b->umax)) {
			b = &bands[nb++];
			b->umin = b->umax = r->users;
			b->label = r->params_key;
			b->min_nb = b->min_np = (size_t)-1;
			b->all_sig = true;
		}
		if (r->users > b->umax)
			b->umax = r->users;
		if (r->margin > b->margin)
			b->margin = r->margin;
		if (r->base.n) {
			b->sum_b += r->base.mean;
			b->cnt_b++;
		}
		if (r->patched.n) {
			b->sum_p += r->patched.mean;
			b->cnt_p++;
		}
		if (r->base.n < b->min_nb)
			b->min_nb = r->base.n;
		if (r->patched.n < b->min_np)
			b->min_np = r->patched.n;
		if (r->verdict == VERDICT_LOCKUP)
			b->lockup = true;
		int dir = r->change > 0 ? 1 : -1;
		if (!r->significant || (b->sig_dir && b->sig_dir != dir))
			b->all_sig = false;
		b->sig_dir = dir;
	}

	/* columns: users, base, patched, n, change */
	grid_init(&g, 5);
	for (size_t i = 0; i < nb; i++) {
		const struct band *b = &bands[i];
		size_t row = grid_add_row(&g);
		char v[96];
		double ab = b->cnt_b ? b->sum_b / (double)b->cnt_b : 0;
		double ap = b->cnt_p ? b->sum_p / (double)b->cnt_p : 0;

		if (b->umin < 0)
			grid_set(&g, row, 0, "%s", *b->label ? b->label : "-");
		else if (b->umin == b->umax)
			grid_set(&g, row, 0, "%lld", b->umin);
		else
			grid_set(&g, row, 0, "%lld - %lld", b->umin, b->umax);
		fmt_aim7_value(ab, first->unit, v, sizeof(v));
		grid_set(&g, row, 1, "%s", b->cnt_b ? v : "-");
		fmt_aim7_value(ap, first->unit, v, sizeof(v));
		grid_set(&g, row, 2, "%s", b->cnt_p ? v : "-");
		grid_set(&g, row, 3, "%zu/%zu", b->min_nb, b->min_np);
		if (b->cnt_b && b->cnt_p && ab != 0) {
			double ch = (ap - ab) / ab;
			bool mark = b->all_sig && (ch > 0 ? 1 : -1) == b->sig_dir;
			grid_set(&g, row, 4, "%+.1f%%%s (\xc2\xb1%g%%)%s", ch * 100,
			         mark ? " *" : "", b->margin * 100, b->lockup ? " lockup" : "");
		} else {
			grid_set(&g, row, 4, "%s", b->lockup ? "lockup" : "-");
		}
	}

	const char *word = users_word(first);
	/* AIM7's heading, for throughput; any other figure says its name */
	char what[128];
	if (aim7_metric(first->metric) || first->higher_better)
		snprintf(what, sizeof(what), "avg throughput");
	else
		snprintf(what, sizeof(what), "avg %s", first->metric);
	size_t w0 = grid_width(&g, 0, 11) + 2;
	if (strlen(word) + 2 > w0)
		w0 = strlen(word) + 2;
	size_t vw1 = grid_width(&g, 1, 11), vw2 = grid_width(&g, 2, 11);
	if (strlen(what) > vw1 + 3)
		vw1 = strlen(what) - 3;
	if (strlen(what) > vw2 + 3)
		vw2 = strlen(what) - 3;
	size_t w1 = vw1 + 5, w2 = vw2 + 5;
	size_t w3 = grid_width(&g, 3, 1) + 2, w4 = grid_width(&g, 4, 6) + 2;
	size_t total = 1 + (w0 + 1) + (w1 + 1) + (w2 + 1) + (w3 + 1) + (w4 + 1);

	title(out, first);
	put_repeat(out, '-', total);
	fputs("\n|  ", out);
	put_left(out, word, w0 - 2);
	fputs("| ", out);
	put_left(out, what, w1 - 1);
	fputs("| ", out);
	put_left(out, what, w2 - 1);
	fputs("| ", out);
	put_left(out, "n", w3 - 1);
	fputs("| ", out);
	put_left(out, "change", w4 - 1);
	fputs("|\n ", out);
	pad(out, w0);
	fputs("| ", out);
	put_left(out, "without patch", w1 - 1);
	fputs("| ", out);
	put_left(out, "with patch", w2 - 1);
	fputs("|", out);
	pad(out, w3);
	fputs("|", out);
	pad(out, w4);
	fputs("|\n", out);
	put_repeat(out, '-', total);
	fputc('\n', out);
	const size_t w[] = {w0, w1, w2, w3, w4};
	const bool fig[] = {false, true, true, false, false};
	for (size_t r = 0; r < g.nrows; r++) {
		put_aim7_cells(out, &g, r, w, fig, 5);
		fputc('\n', out);
		put_repeat(out, '-', total);
		fputc('\n', out);
	}
	legend(out, c);
	grid_release(&g);
	free(bands);
}

int report_run_bands(FILE *out, const char *title, const char *unit,
                     const struct report_band_row *rows, size_t n)
{
	static const char what[] = "avg throughput";
	struct grid g;

	/* columns: users (the band), figure, measured at, n, note */
	grid_init(&g, 5);
	for (size_t i = 0; i < n; i++) {
		const struct report_band_row *b = &rows[i];
		size_t row = grid_add_row(&g);
		char v[96];
		if (b->umin == b->umax)
			grid_set(&g, row, 0, "%lld", b->umin);
		else
			grid_set(&g, row, 0, "%lld - %lld", b->umin, b->umax);
		fmt_aim7_value(b->mean, unit, v, sizeof(v));
		grid_set(&g, row, 1, "%s", b->n ? v : "-");
		grid_set(&g, row, 2, "%lld", b->users);
		grid_set(&g, row, 3, "%zu", b->n);
		grid_set(&g, row, 4, "%s%s%s%s", b->note ? b->note : "", b->kind ? " (" : "",
		         b->kind ? b->kind : "", b->kind ? ")" : "");
	}
	size_t w0 = grid_width(&g, 0, 11) + 2;
	size_t vw1 = grid_width(&g, 1, sizeof(what) - 4);
	size_t w1 = vw1 + 5, w2 = grid_width(&g, 2, 11) + 2, w3 = grid_width(&g, 3, 1) + 2;
	size_t total = 1 + (w0 + 1) + (w1 + 1) + (w2 + 1) + (w3 + 1);

	fprintf(out, "%s\n", title);
	put_repeat(out, '-', total);
	fputs("\n|  ", out);
	put_left(out, "users", w0 - 2);
	fputs("| ", out);
	put_left(out, what, w1 - 1);
	fputs("| ", out);
	put_left(out, "measured at", w2 - 1);
	fputs("| ", out);
	put_left(out, "n", w3 - 1);
	fputs("|\n", out);
	put_repeat(out, '-', total);
	fputc('\n', out);
	const size_t w[] = {w0, w1, w2, w3};
	const bool fig[] = {false, true, false, false};
	for (size_t r = 0; r < g.nrows; r++) {
		put_aim7_cells(out, &g, r, w, fig, 4);
		if (*grid_get(&g, r, 4))
			fprintf(out, " %s", grid_get(&g, r, 4));
		fputc('\n', out);
		put_repeat(out, '-', total);
		fputc('\n', out);
	}
	grid_release(&g);
	return finish(out);
}

/* Start index of every (workload, lock, metric) table with figures. */
static size_t table_starts(const struct comparison *c, size_t *starts)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nrows;) {
		size_t j = i;
		bool any = false;
		while (j < c->nrows && same_table(&c->rows[i], &c->rows[j])) {
			if (!lockup_only(&c->rows[j]))
				any = true;
			j++;
		}
		if (any)
			starts[n++] = i;
		i = j;
	}
	return n;
}

static size_t table_end(const struct comparison *c, size_t from)
{
	size_t j = from;
	while (j < c->nrows && same_table(&c->rows[from], &c->rows[j]))
		j++;
	return j;
}

static int render_aim7(const struct comparison *c, FILE *out)
{
	size_t *starts = strutil_xcalloc(c->nrows + 1, sizeof(size_t));
	size_t n = table_starts(c, starts), printed = 0;
	bool *chosen = strutil_xcalloc(n + 1, sizeof(bool));

	/* per (workload, lock): jpm / ops_per_sec tables, or every table when neither */
	for (size_t i = 0; i < n; i++) {
		const struct compare_row *r = &c->rows[starts[i]];
		bool pair_has = false;
		for (size_t k = 0; k < n; k++) {
			const struct compare_row *o = &c->rows[starts[k]];
			if (strcmp(o->workload, r->workload) == 0 &&
			    strcmp(o->lock, r->lock) == 0 && aim7_metric(o->metric))
				pair_has = true;
		}
		chosen[i] = !pair_has || aim7_metric(r->metric);
	}
	/* the AIM7 jobs-per-minute tables lead, as on the list */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct compare_row *r = &c->rows[starts[i]];
			bool lead =
			    strcmp(r->workload, "aim7-mix") == 0 && strcmp(r->metric, "jpm") == 0;
			if (!chosen[i] || lead != (pass == 0))
				continue;
			if (printed++)
				fputc('\n', out);
			render_aim7_table(out, c, starts[i], table_end(c, starts[i]));
		}
	}
	if (!printed)
		fputs("no figures to compare\n", out);
	put_sentences(out, c);
	free(chosen);
	free(starts);
	return finish(out);
}

/* ---- perf-bench grid ---- */

static void render_perf_table(FILE *out, const struct comparison *c, size_t from, size_t to)
{
	const struct compare_row *first = &c->rows[from];
	bool by_key = false;
	struct grid g;
	char hb[256], hp[256];

	for (size_t i = from; i < to; i++) {
		if (c->rows[i].users < 0)
			by_key = true;
		for (size_t k = from; k < i; k++)
			if (c->rows[k].users == c->rows[i].users)
				by_key = true;
	}
	if (strcmp(first->metric, "wake_ms") == 0) {
		snprintf(hb, sizeof(hb), "baseline time (ms)");
		snprintf(hp, sizeof(hp), "patched time (ms)");
	} else if (first->unit && *first->unit) {
		snprintf(hb, sizeof(hb), "baseline %s (%s)", first->metric, first->unit);
		snprintf(hp, sizeof(hp), "patched %s (%s)", first->metric, first->unit);
	} else {
		snprintf(hb, sizeof(hb), "baseline %s", first->metric);
		snprintf(hp, sizeof(hp), "patched %s", first->metric);
	}
	const char *heads[] = {by_key ? "params" : users_word(first),
	                       hb,
	                       "stddev",
	                       hp,
	                       "stddev",
	                       "overhead",
	                       "n",
	                       "sig"};
	enum { NCOL = 8 };

	grid_init(&g, NCOL);
	for (size_t i = to; i-- > from;) {
		const struct compare_row *r = &c->rows[i];
		if (lockup_only(r))
			continue;
		size_t row = grid_add_row(&g);
		if (by_key)
			grid_set(&g, row, 0, "%s", *r->params_key ? r->params_key : "-");
		else
			grid_set(&g, row, 0, "%lld", r->users);
		for (int side = 0; side < 2; side++) {
			const struct stats_summary *sm = side ? &r->patched : &r->base;
			char mean[64] = "-", sd[64] = "-";

			if (sm->n) {
				fmt_perf(sm->mean, mean, sizeof(mean));
				fmt_perf(sm->stddev, sd, sizeof(sd));
			}
			grid_set(&g, row, 1 + 2 * side, "%s", mean);
			grid_set(&g, row, 2 + 2 * side, "%s", sd);
		}
		char margin[32];
		fmt_margin(r, margin, sizeof(margin));
		if (r->base.n && r->patched.n && r->base.mean != 0)
			grid_set(&g, row, 5, "%+.2f%% (%s)", r->change * 100, margin);
		else
			grid_set(&g, row, 5, "- (%s)", margin);
		grid_set(&g, row, 6, "%zu/%zu", r->base.n, r->patched.n);
		grid_set(&g, row, 7, "%s",
		         r->verdict == VERDICT_LOCKUP ? "lockup"
		         : r->significant             ? "*"
		                                      : "");
	}
	size_t w[NCOL];
	for (size_t k = 0; k < NCOL; k++)
		w[k] = grid_width(&g, k, strlen(heads[k]));

	title(out, first);
	for (int line = 0; line < 4; line++) {
		if (line == 0 || line == 2) {
			for (size_t k = 0; k < NCOL; k++) {
				fputc('+', out);
				put_repeat(out, '-', w[k] + 2);
			}
			fputs("+\n", out);
		} else if (line == 1) {
			for (size_t k = 0; k < NCOL; k++) {
				fputs("| ", out);
				put_left(out, heads[k], w[k]);
				fputc(' ', out);
			}
			fputs("|\n", out);
		} else {
			for (size_t r = 0; r < g.nrows; r++) {
				for (size_t k = 0; k < NCOL; k++) {
					fputs("| ", out);
					if (k == 0 && !by_key)
						put_right(out, grid_get(&g, r, k), w[k]);
					else
						put_left(out, grid_get(&g, r, k), w[k]);
					fputc(' ', out);
				}
				fputs("|\n", out);
			}
		}
	}
	for (size_t k = 0; k < NCOL; k++) {
		fputc('+', out);
		put_repeat(out, '-', w[k] + 2);
	}
	fputs("+\n", out);
	legend(out, c);
	grid_release(&g);
}

static int render_perf(const struct comparison *c, FILE *out)
{
	size_t *starts = strutil_xcalloc(c->nrows + 1, sizeof(size_t));
	size_t n = table_starts(c, starts);

	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\n', out);
		render_perf_table(out, c, starts[i], table_end(c, starts[i]));
	}
	if (!n)
		fputs("no figures to compare\n", out);
	put_sentences(out, c);
	free(starts);
	return finish(out);
}

/* ---- LKP ---- */

static void point_name(struct strutil_buf *sb, const struct compare_row *r, bool metric)
{
	strutil_buf_addf(sb, "%s.%s", r->workload, r->lock);
	if (metric)
		strutil_buf_addf(sb, ".%s", r->metric);
	if (*r->params_key)
		strutil_buf_addf(sb, ".%s", r->params_key);
}

static void n_range(const struct comparison *c, bool patched, char *buf, size_t len)
{
	size_t lo = (size_t)-1, hi = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		size_t n = patched ? c->rows[i].patched.n : c->rows[i].base.n;
		if (lockup_only(&c->rows[i]))
			continue;
		if (n < lo)
			lo = n;
		if (n > hi)
			hi = n;
	}
	if (lo == (size_t)-1)
		snprintf(buf, len, "0");
	else if (lo == hi)
		snprintf(buf, len, "%zu", lo);
	else
		snprintf(buf, len, "%zu-%zu", lo, hi);
}

static void lkp_stddev(FILE *out, const struct stats_summary *s)
{
	if (s->n >= 2 && s->mean != 0)
		fprintf(out, "\xc2\xb1%3.0f%%", fabs(s->stddev / s->mean) * 100);
	else
		fputs("     ", out);
}

static int render_lkp(const struct comparison *c, FILE *out)
{
	char nb[64], np[64], v[64];
	bool any_lockup = false;

	n_range(c, false, nb, sizeof(nb));
	n_range(c, true, np, sizeof(np));
	fprintf(out, "samples per side: base n=%s, patched n=%s; rounds: base %d, patched %d\n", nb,
	        np, c->base_rounds, c->patched_rounds);

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		if (r->verdict != VERDICT_LOCKUP || point_seen_before(c, i))
			continue;
		if (!any_lockup) {
			fputs("\n     fail:runs  %reproduction    fail:runs\n", out);
			fputs("         |             |             |\n", out);
			any_lockup = true;
		}
		put_fail_runs(out, r->base_lockups, r->base_runs, r->patched_lockups,
		              r->patched_runs);
		fputs("   ", out);
		struct strutil_buf sb = STRUTIL_BUF_INIT;
		point_name(&sb, r, false);
		fputs(strutil_buf_str(&sb), out);
		strutil_buf_release(&sb);
		if (r->lockup_message && *r->lockup_message) {
			fputs(": ", out);
			for (const char *m = r->lockup_message; *m; m++)
				fputc(*m == '\n' || *m == '\r' ? ' ' : *m, out);
		}
		fputc('\n', out);
	}

	put_splats(out, c);
	fputs("\n         base             %stddev     %change         %stddev\n", out);
	fputs("             \\          |                \\          |\n", out);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		if (lockup_only(r))
			continue;
		if (r->base.n)
			fmt_plain(r->base.mean, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "-");
		put_right(out, v, 10);
		pad(out, 12);
		lkp_stddev(out, &r->base);
		if (r->base.n && r->patched.n && r->base.mean != 0)
			snprintf(v, sizeof(v), "%+.1f%%", r->change * 100);
		else
			snprintf(v, sizeof(v), "-");
		put_right(out, v, 11);
		fputc(r->significant ? '*' : ' ', out);
		if (r->patched.n)
			fmt_plain(r->patched.mean, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "-");
		put_right(out, v, 10);
		fputc(' ', out);
		lkp_stddev(out, &r->patched);
		fputs("  ", out);
		struct strutil_buf sb = STRUTIL_BUF_INIT;
		point_name(&sb, r, true);
		fputs(strutil_buf_str(&sb), out);
		strutil_buf_release(&sb);
		if (r->verdict == VERDICT_LOCKUP)
			fputs(" (lockup)", out);
		if (r->control)
			fputs(" (control)", out);
		fmt_margin(r, v, sizeof(v));
		fprintf(out, " (margin %s)", v);
		fputc('\n', out);
	}
	fputc('\n', out);
	legend(out, c);
	return finish(out);
}

/* ---- plain text ---- */

static void fmt_mean_sd(const struct stats_summary *s, char *buf, size_t len)
{
	char m[64], sd[64];
	if (!s->n) {
		snprintf(buf, len, "- (0)");
		return;
	}
	fmt_plain(s->mean, m, sizeof(m));
	fmt_plain(s->stddev, sd, sizeof(sd));
	snprintf(buf, len, "%s \xc2\xb1 %s (%zu)", m, sd, s->n);
}

static int render_text(const struct comparison *c, FILE *out)
{
	static const char *const heads[] = {"workload", "lock",   "params", "metric", "base",
	                                    "patched",  "change", "p",      "q",      "verdict"};
	enum { NCOL = 10 };
	struct grid g;
	char buf[160];
	size_t w[NCOL];

	fprintf(out, "suite %s on %s (%d cpus, %s, kernel %s): %d base and %d patched rounds\n",
	        c->suite ? c->suite : "", c->machine.hostname ? c->machine.hostname : "unknown",
	        c->machine.cpus, c->machine.model ? c->machine.model : "unknown",
	        c->machine.kernel ? c->machine.kernel : "unknown", c->base_rounds,
	        c->patched_rounds);
	fprintf(out, "overall: %s%s\n\n", verdict_name(comparison_overall(c)),
	        c->identical_code ? " (the patched image is the base's: no code changed)" : "");

	grid_init(&g, NCOL);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		size_t row = grid_add_row(&g);
		grid_set(&g, row, 0, "%s", r->workload);
		grid_set(&g, row, 1, "%s", r->lock);
		grid_set(&g, row, 2, "%s", *r->params_key ? r->params_key : "-");
		grid_set(&g, row, 3, "%s", r->metric);
		fmt_mean_sd(&r->base, buf, sizeof(buf));
		grid_set(&g, row, 4, "%s", buf);
		fmt_mean_sd(&r->patched, buf, sizeof(buf));
		grid_set(&g, row, 5, "%s", buf);
		fmt_margin(r, buf, sizeof(buf));
		if (r->base.n && r->patched.n && r->base.mean != 0)
			grid_set(&g, row, 6, "%+.1f%%%s %s", r->change * 100,
			         r->significant ? " *" : "", buf);
		else if (lockup_only(r))
			grid_set(&g, row, 6, "-");
		else
			grid_set(&g, row, 6, "- %s", buf);
		if (r->tested) {
			grid_set(&g, row, 7, "%.3g", r->p);
			grid_set(&g, row, 8, "%.3g", r->q);
		} else {
			grid_set(&g, row, 7, "-");
			grid_set(&g, row, 8, "-");
		}
		if (report_note_text(r, buf, sizeof(buf)) && !r->control)
			/* an exact count: a note beside the timed rows, deciding only escalated */
			grid_set(&g, row, 9, "%s (code path: %s%s)",
			         r->escalated ? verdict_name(r->verdict) : "note", buf,
			         r->escalated ? ", beside a timed row not shown unchanged" : "");
		else if (r->verdict == VERDICT_INCONCLUSIVE && r->unresolvable > 0)
			grid_set(&g, row, 9, "not resolvable on this machine: %.1f%%%s%s",
			         r->unresolvable * 100,
			         !r->control && compare_row_moved(r) ? "; moved past its margin"
			                                             : "",
			         r->control ? " (control)" : "");
		else
			grid_set(&g, row, 9, "%s%s", verdict_name(r->verdict),
			         r->control ? " (control)" : "");
	}
	for (size_t k = 0; k < NCOL; k++)
		w[k] = grid_width(&g, k, strlen(heads[k]));
	for (size_t k = 0; k < NCOL; k++) {
		put_left(out, heads[k], k + 1 < NCOL ? w[k] + 2 : 0);
	}
	fputc('\n', out);
	for (size_t r = 0; r < g.nrows; r++) {
		for (size_t k = 0; k < NCOL; k++)
			put_left(out, grid_get(&g, r, k), k + 1 < NCOL ? w[k] + 2 : 0);
		fputc('\n', out);
	}
	if (!g.nrows)
		fputs("(no points on both sides)\n", out);
	fputc('\n', out);
	legend(out, c);
	put_sentences(out, c);
	put_splats(out, c);
	grid_release(&g);
	return finish(out);
}

/* ---- JSON ---- */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *summary_json(const struct stats_summary *s)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o}", "n", (json_int_t)s->n, "mean", jnum(s->mean),
	                 "stddev", jnum(s->stddev), "min", jnum(s->min), "max", jnum(s->max));
}

static int render_json(const struct comparison *c, FILE *out)
{
	json_t *doc, *rows = json_array();
	int rc;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		json_t *lockup = json_null();
		if (r->base_lockups || r->patched_lockups)
			lockup = json_pack("{s:i, s:i, s:i, s:i, s:o, s:o}", "base_runs",
			                   r->base_runs, "patched_runs", r->patched_runs,
			                   "base_lockups", r->base_lockups, "patched_lockups",
			                   r->patched_lockups, "message", jstr(r->lockup_message),
			                   "stacks", jstr(r->lockup_stacks));
		json_t *row = json_pack(
		    "{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
		    "s:s, s:b, s:b, s:I, s:o}",
		    "workload", r->workload, "lock", r->lock, "params", r->params_key, "metric",
		    r->metric, "unit", r->unit ? r->unit : "", "better",
		    r->higher_better ? "higher" : "lower", "users", (json_int_t)r->users, "base",
		    summary_json(&r->base), "patched", summary_json(&r->patched), "change",
		    jnum(r->change), "change_lo", jnum(r->change_lo), "change_hi",
		    jnum(r->change_hi), "p", jnum(r->p), "q", jnum(r->q), "verdict",
		    verdict_name(r->verdict), "significant", r->significant, "control", r->control,
		    "pairs", (json_int_t)r->pairs, "lockup", lockup);
		json_object_set_new(row, "margin", jnum(r->margin));
		json_object_set_new(row, "p_eq", jnum(r->p_eq));
		json_object_set_new(row, "q_eq", jnum(r->q_eq));
		json_object_set_new(row, "headline", json_boolean(r->headline));
		json_object_set_new(row, "instrument", json_string(row_instrument(r)));
		json_object_set_new(row, "repeated", json_integer(r->repeated));
		/* a row the plan says this machine cannot resolve: its resolution at the limit
		 * (roundplan.h) */
		if (r->unresolvable > 0)
			json_object_set_new(row, "unresolvable", jnum(r->unresolvable));
		/* an exact count: a code-path note, deciding only when escalated */
		if (compare_row_is_note(r)) {
			char note[128];

			report_note_text(r, note, sizeof(note));
			json_object_set_new(row, "note", json_string(note));
			json_object_set_new(row, "escalated", json_boolean(r->escalated));
		}
		json_object_set_new(row, "decides", json_boolean(compare_row_decides(r)));
		json_array_append_new(rows, row);
	}
	doc = json_pack("{s:s, s:{s:o, s:i, s:o, s:o}, s:i, s:i, s:i, s:s, s:o}", "suite",
	                c->suite ? c->suite : "", "machine", "hostname", jstr(c->machine.hostname),
	                "cpus", c->machine.cpus, "model", jstr(c->machine.model), "kernel",
	                jstr(c->machine.kernel), "base_rounds", c->base_rounds, "patched_rounds",
	                c->patched_rounds, "confirm_from", c->opts.confirm_from, "overall",
	                verdict_name(comparison_overall(c)), "rows", rows);
	if (!doc)
		return -1;
	json_t *splats = json_array();
	for (size_t i = 0; i < c->nsplats; i++) {
		const struct compare_splat *sp = &c->splats[i];
		json_array_append_new(
		    splats,
		    json_pack("{s:s, s:o, s:o, s:o, s:i, s:i, s:b}", "key", sp->key, "message",
		              jstr(sp->message), "lines", jstr(sp->lines), "boot", jstr(sp->boot),
		              "base_fail", sp->base_fail, "patched_fail", sp->patched_fail,
		              "new_in_patched", sp->new_in_patched));
	}
	json_object_set_new(doc, "splats", splats);
	/* what the server asks more rounds by (comparison_wants_rounds) */
	json_object_set_new(doc, "more_rounds", json_boolean(comparison_wants_rounds(c)));
	json_object_set_new(doc, "identical_code", json_boolean(c->identical_code));
	if (c->image)
		json_object_set_new(doc, "image", json_string(c->image));
	json_object_set_new(doc, "emulated", json_boolean(report_emulated(c)));
	if (report_emulated(c) && c->machine.guest_thresholds)
		json_object_set_new(doc, "guest_thresholds",
		                    json_string(c->machine.guest_thresholds));
	rc = json_dumpf(doc, out, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	json_decref(doc);
	if (rc != 0)
		return -1;
	fputc('\n', out);
	return finish(out);
}

/* ---- entry points ---- */

int report_format_parse(const char *name, enum report_format *out)
{
	static const struct {
		const char *name;
		enum report_format fmt;
	} names[] = {{"aim7", REPORT_AIM7},
	             {"perf", REPORT_PERF},
	             {"lkp", REPORT_LKP},
	             {"text", REPORT_TEXT},
	             {"json", REPORT_JSON}};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(names[i].name, name) == 0) {
			*out = names[i].fmt;
			return 0;
		}
	}
	return -1;
}

int report_render(const struct comparison *c, enum report_format fmt, FILE *out)
{
	switch (fmt) {
	case REPORT_AIM7:
		return render_aim7(c, out);
	case REPORT_PERF:
		return render_perf(c, out);
	case REPORT_LKP:
		return render_lkp(c, out);
	case REPORT_TEXT:
		return render_text(c, out);
	case REPORT_JSON:
		return render_json(c, out);
	}
	return -1;
}
