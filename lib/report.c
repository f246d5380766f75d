/*
 * report.c - the tables locking developers post, rendered from a comparison: the
 * perf-bench grid, the LKP %change block with fail:runs, a plain text table and
 * JSON, and the entry points that pick a layout (AIM7 bands are report_aim7.c).
 * Every layout states the samples behind each row and marks significant rows with "*".
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "strutil.h"

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
	const char *heads[] = {by_key ? "params" : rep_users_word(first),
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
		if (rep_lockup_only(r))
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
				rep_fmt_perf(sm->mean, mean, sizeof(mean));
				rep_fmt_perf(sm->stddev, sd, sizeof(sd));
			}
			grid_set(&g, row, 1 + 2 * side, "%s", mean);
			grid_set(&g, row, 2 + 2 * side, "%s", sd);
		}
		char margin[32];
		rep_fmt_margin(r, margin, sizeof(margin));
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

	rep_title(out, first);
	for (int line = 0; line < 4; line++) {
		if (line == 0 || line == 2) {
			for (size_t k = 0; k < NCOL; k++) {
				fputc('+', out);
				rep_put_repeat(out, '-', w[k] + 2);
			}
			fputs("+\n", out);
		} else if (line == 1) {
			for (size_t k = 0; k < NCOL; k++) {
				fputs("| ", out);
				rep_put_left(out, heads[k], w[k]);
				fputc(' ', out);
			}
			fputs("|\n", out);
		} else {
			for (size_t r = 0; r < g.nrows; r++) {
				for (size_t k = 0; k < NCOL; k++) {
					fputs("| ", out);
					if (k == 0 && !by_key)
						rep_put_right(out, grid_get(&g, r, k), w[k]);
					else
						rep_put_left(out, grid_get(&g, r, k), w[k]);
					fputc(' ', out);
				}
				fputs("|\n", out);
			}
		}
	}
	for (size_t k = 0; k < NCOL; k++) {
		fputc('+', out);
		rep_put_repeat(out, '-', w[k] + 2);
	}
	fputs("+\n", out);
	rep_legend(out, c);
	grid_release(&g);
}

static int render_perf(const struct comparison *c, FILE *out)
{
	size_t *starts = strutil_xcalloc(c->nrows + 1, sizeof(size_t));
	size_t n = rep_table_starts(c, starts);

	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\n', out);
		render_perf_table(out, c, starts[i], rep_table_end(c, starts[i]));
	}
	if (!n)
		fputs("no figures to compare\n", out);
	rep_put_sentences(out, c);
	free(starts);
	return rep_finish(out);
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
		if (rep_lockup_only(&c->rows[i]))
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
		if (r->verdict != VERDICT_LOCKUP || rep_point_seen_before(c, i))
			continue;
		if (!any_lockup) {
			fputs("\n     fail:runs  %reproduction    fail:runs\n", out);
			fputs("         |             |             |\n", out);
			any_lockup = true;
		}
		rep_put_fail_runs(out, r->base_lockups, r->base_runs, r->patched_lockups,
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

	rep_put_splats(out, c);
	fputs("\n         base             %stddev     %change         %stddev\n", out);
	fputs("             \\          |                \\          |\n", out);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		if (rep_lockup_only(r))
			continue;
		if (r->base.n)
			rep_fmt_plain(r->base.mean, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "-");
		rep_put_right(out, v, 10);
		rep_pad(out, 12);
		lkp_stddev(out, &r->base);
		if (r->base.n && r->patched.n && r->base.mean != 0)
			snprintf(v, sizeof(v), "%+.1f%%", r->change * 100);
		else
			snprintf(v, sizeof(v), "-");
		rep_put_right(out, v, 11);
		fputc(r->significant ? '*' : ' ', out);
		if (r->patched.n)
			rep_fmt_plain(r->patched.mean, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "-");
		rep_put_right(out, v, 10);
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
		rep_fmt_margin(r, v, sizeof(v));
		fprintf(out, " (margin %s)", v);
		fputc('\n', out);
	}
	fputc('\n', out);
	rep_legend(out, c);
	return rep_finish(out);
}

/* ---- plain text ---- */

static void fmt_mean_sd(const struct stats_summary *s, char *buf, size_t len)
{
	char m[64], sd[64];
	if (!s->n) {
		snprintf(buf, len, "- (0)");
		return;
	}
	rep_fmt_plain(s->mean, m, sizeof(m));
	rep_fmt_plain(s->stddev, sd, sizeof(sd));
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
		rep_fmt_margin(r, buf, sizeof(buf));
		if (r->base.n && r->patched.n && r->base.mean != 0)
			grid_set(&g, row, 6, "%+.1f%%%s %s", r->change * 100,
			         r->significant ? " *" : "", buf);
		else if (rep_lockup_only(r))
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
		rep_put_left(out, heads[k], k + 1 < NCOL ? w[k] + 2 : 0);
	}
	fputc('\n', out);
	for (size_t r = 0; r < g.nrows; r++) {
		for (size_t k = 0; k < NCOL; k++)
			rep_put_left(out, grid_get(&g, r, k), k + 1 < NCOL ? w[k] + 2 : 0);
		fputc('\n', out);
	}
	if (!g.nrows)
		fputs("(no points on both sides)\n", out);
	fputc('\n', out);
	rep_legend(out, c);
	rep_put_sentences(out, c);
	rep_put_splats(out, c);
	grid_release(&g);
	return rep_finish(out);
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
		json_object_set_new(row, "instrument", json_string(rep_row_instrument(r)));
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
	return rep_finish(out);
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
		return rep_render_aim7(c, out);
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
