/*
 * report_legend.c - the words around the tables (report.h, report_internal.h):
 * the emulation note, the legends that say which test and noise stand behind
 * the marks, a row's note, the identical-image note and the lockup sentences
 * with the stuck threads' splats.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "strutil.h"

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
		if (r->pairs < COMPARE_MIN_PAIRS || rep_lockup_only(r))
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
void rep_fmt_margin(const struct compare_row *r, char *buf, size_t len)
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
const char *rep_row_instrument(const struct compare_row *r)
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

		if (rep_lockup_only(&c->rows[i]))
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

void rep_legend(FILE *out, const struct comparison *c)
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

/* ---- lockup sentences ---- */

bool rep_point_seen_before(const struct comparison *c, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (c->rows[k].verdict == VERDICT_LOCKUP &&
		    rep_same_point(&c->rows[k], &c->rows[i]))
			return true;
	return false;
}

char *report_lockup_sentences(const struct comparison *c)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		if (r->verdict != VERDICT_LOCKUP || rep_point_seen_before(c, i))
			continue;
		if (r->users >= 0)
			strutil_buf_addf(&sb, "at %lld %s, ", r->users, rep_users_word(r));
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
void rep_put_splats(FILE *out, const struct comparison *c)
{
	if (!c->nsplats)
		return;
	fputs("\nsplats (kernel checkers' reports), documents with the key:\n", out);
	fputs("     fail:runs  %reproduction    fail:runs\n", out);
	fputs("         |             |             |\n", out);
	for (size_t i = 0; i < c->nsplats; i++) {
		const struct compare_splat *sp = &c->splats[i];
		rep_put_fail_runs(out, sp->base_fail, c->base_rounds, sp->patched_fail,
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

void rep_put_sentences(FILE *out, const struct comparison *c)
{
	char *s = report_lockup_sentences(c);
	if (*s) {
		fputc('\n', out);
		fputs(s, out);
	}
	free(s);
}
