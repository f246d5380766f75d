/*
 * report_aim7.c - the AIM7 layout (report.h, report_internal.h): bands of
 * users with JPM, a table per (workload, lock, metric), and the bands of a
 * run's own figures (report_run_bands).
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "strutil.h"

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
			rep_put_right(out, grid_get(g, r, i), w[i] - 5);
			fputs("   ", out);
		} else {
			fputs("| ", out);
			rep_put_left(out, grid_get(g, r, i), w[i] - 1);
		}
	}
	fputc('|', out);
}

/*
 * The rows from..to gathered into AIM7's bands of users (report_aim7_band):
 * their mean figures, smallest sample counts, widest margin and whether
 * every row moved one way significantly.  How many bands.
 */
static size_t aim7_bands(const struct comparison *c, size_t from, size_t to, struct band *bands)
{
	size_t nb = 0;

	for (size_t i = from; i < to; i++) {
		const struct compare_row *r = &c->rows[i];
		struct band *b = nb ? &bands[nb - 1] : NULL;
		if (rep_lockup_only(r))
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
	return nb;
}

static void render_aim7_table(FILE *out, const struct comparison *c, size_t from, size_t to)
{
	struct band *bands = strutil_xcalloc(to - from, sizeof(*bands));
	size_t nb;
	struct grid g;
	const struct compare_row *first = &c->rows[from];

	nb = aim7_bands(c, from, to, bands);

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
		rep_fmt_aim7_value(ab, first->unit, v, sizeof(v));
		grid_set(&g, row, 1, "%s", b->cnt_b ? v : "-");
		rep_fmt_aim7_value(ap, first->unit, v, sizeof(v));
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

	const char *word = rep_users_word(first);
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

	rep_title(out, first);
	rep_put_repeat(out, '-', total);
	fputs("\n|  ", out);
	rep_put_left(out, word, w0 - 2);
	fputs("| ", out);
	rep_put_left(out, what, w1 - 1);
	fputs("| ", out);
	rep_put_left(out, what, w2 - 1);
	fputs("| ", out);
	rep_put_left(out, "n", w3 - 1);
	fputs("| ", out);
	rep_put_left(out, "change", w4 - 1);
	fputs("|\n ", out);
	rep_pad(out, w0);
	fputs("| ", out);
	rep_put_left(out, "without patch", w1 - 1);
	fputs("| ", out);
	rep_put_left(out, "with patch", w2 - 1);
	fputs("|", out);
	rep_pad(out, w3);
	fputs("|", out);
	rep_pad(out, w4);
	fputs("|\n", out);
	rep_put_repeat(out, '-', total);
	fputc('\n', out);
	const size_t w[] = {w0, w1, w2, w3, w4};
	const bool fig[] = {false, true, true, false, false};
	for (size_t r = 0; r < g.nrows; r++) {
		put_aim7_cells(out, &g, r, w, fig, 5);
		fputc('\n', out);
		rep_put_repeat(out, '-', total);
		fputc('\n', out);
	}
	rep_legend(out, c);
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
		rep_fmt_aim7_value(b->mean, unit, v, sizeof(v));
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
	rep_put_repeat(out, '-', total);
	fputs("\n|  ", out);
	rep_put_left(out, "users", w0 - 2);
	fputs("| ", out);
	rep_put_left(out, what, w1 - 1);
	fputs("| ", out);
	rep_put_left(out, "measured at", w2 - 1);
	fputs("| ", out);
	rep_put_left(out, "n", w3 - 1);
	fputs("|\n", out);
	rep_put_repeat(out, '-', total);
	fputc('\n', out);
	const size_t w[] = {w0, w1, w2, w3};
	const bool fig[] = {false, true, false, false};
	for (size_t r = 0; r < g.nrows; r++) {
		put_aim7_cells(out, &g, r, w, fig, 4);
		if (*grid_get(&g, r, 4))
			fprintf(out, " %s", grid_get(&g, r, 4));
		fputc('\n', out);
		rep_put_repeat(out, '-', total);
		fputc('\n', out);
	}
	grid_release(&g);
	return rep_finish(out);
}

/* Start index of every (workload, lock, metric) table with figures. */
size_t rep_table_starts(const struct comparison *c, size_t *starts)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nrows;) {
		size_t j = i;
		bool any = false;
		while (j < c->nrows && rep_same_table(&c->rows[i], &c->rows[j])) {
			if (!rep_lockup_only(&c->rows[j]))
				any = true;
			j++;
		}
		if (any)
			starts[n++] = i;
		i = j;
	}
	return n;
}

size_t rep_table_end(const struct comparison *c, size_t from)
{
	size_t j = from;
	while (j < c->nrows && rep_same_table(&c->rows[from], &c->rows[j]))
		j++;
	return j;
}

int rep_render_aim7(const struct comparison *c, FILE *out)
{
	size_t *starts = strutil_xcalloc(c->nrows + 1, sizeof(size_t));
	size_t n = rep_table_starts(c, starts), printed = 0;
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
			render_aim7_table(out, c, starts[i], rep_table_end(c, starts[i]));
		}
	}
	if (!printed)
		fputs("no figures to compare\n", out);
	rep_put_sentences(out, c);
	free(chosen);
	free(starts);
	return rep_finish(out);
}
