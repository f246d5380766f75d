/*
 * reply.c - the reply mail of a finished submission (reply.h): the body in
 * the kernel test robot's manner, the headers through mail.c, a row of
 * the outbox.
 */
#include "reply.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bycommit.h"
#include "config.h"
#include "db.h"
#include "mail.h"
#include "outbox.h"
#include "report.h"
#include "verdicts.h"

/* Prose is wrapped here; tables and stacks may use up to REPLY_MAX_COLUMNS. */
#define REPLY_WRAP 72

struct reply_data {
	long long id;
	PGresult *sub; /* state, subject, reply_to_msgid, notify, reason, verdict, suites, source,
	                  url, git_url, git_ref, git_base, tree, branch */
	PGresult
	    *head; /* author, subject, message_id, mail_references, mail_to, mail_cc, patches */
	PGresult *jobs; /* not done, regression or lockup, all, not build */
	PGresult *reviewers;
	PGresult *commits; /* variant, label, range: the commits of a pulled range measured */
	struct stored_comparison *cmps;
	size_t ncmps;
	struct bycommit *pre; /* one per comparison, or NULL */
	bool done;
};

static void reply_data_release(struct reply_data *d)
{
	PQclear(d->sub);
	PQclear(d->head);
	PQclear(d->jobs);
	PQclear(d->reviewers);
	PQclear(d->commits);
	for (size_t i = 0; d->pre && i < d->ncmps; i++)
		bycommit_release(&d->pre[i]);
	free(d->pre);
	verdicts_free(d->cmps, d->ncmps);
	memset(d, 0, sizeof(*d));
}

/* Columns of s as a terminal shows them: UTF-8 continuation bytes take none. */
static size_t reply_columns(const char *s, size_t n)
{
	size_t cols = 0;

	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cols;
}

/*
 * text wrapped at REPLY_WRAP columns, starting at column start (what the
 * caller wrote on the line already), continuation lines indented by indent
 * spaces; a word longer than the line stays whole up to REPLY_MAX_COLUMNS
 * and is cut there.  Line breaks in text are kept.
 */
static void reply_wrap(FILE *f, const char *text, size_t start, int indent)
{
	size_t col = start;
	bool first = true, ended = false;
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, " \n"), w = reply_columns(p, n);

		if (!first && col + 1 + w > REPLY_WRAP) {
			fprintf(f, "\n%*s", indent, "");
			col = (size_t)indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		first = false;
		if (col + w > REPLY_MAX_COLUMNS) {
			size_t room = REPLY_MAX_COLUMNS - col, k = 0, c = 0;

			while (k < n && (c < room || ((unsigned char)p[k] & 0xc0) == 0x80)) {
				c += ((unsigned char)p[k] & 0xc0) != 0x80;
				k++;
			}
			n = k;
			w = c;
		}
		fwrite(p, 1, n, f);
		col += w;
		p += n;
		while (*p == ' ')
			p++;
		if (*p == '\n') {
			p++;
			fprintf(f, "\n%*s", *p ? indent : 0, "");
			col = *p ? (size_t)indent : 0;
			first = true;
			ended = !*p;
		}
	}
	if (!ended)
		fputc('\n', f);
}

static void reply_point(FILE *f, const struct compare_row *r)
{
	fprintf(f, "%s.%s.%s", r->workload, r->lock, r->metric);
	if (*r->params_key)
		fprintf(f, " (%s)", r->params_key);
}

/*
 * The deciding row with verdict want and the largest change over every
 * comparison (any row for a lockup), and in *count how many there are.
 */
static const struct compare_row *reply_worst(const struct reply_data *d, enum verdict want,
                                             size_t *count)
{
	const struct compare_row *best = NULL;

	*count = 0;
	for (size_t i = 0; i < d->ncmps; i++) {
		const struct comparison *c = &d->cmps[i].cmp;

		for (size_t k = 0; k < c->nrows; k++) {
			const struct compare_row *r = &c->rows[k];

			if (r->verdict != want ||
			    (want != VERDICT_LOCKUP && !compare_row_decides(r)))
				continue;
			(*count)++;
			/* a timed row leads; an escalated code-path note only when alone */
			if (!best || (compare_row_is_note(best) && !compare_row_is_note(r)) ||
			    (compare_row_is_note(best) == compare_row_is_note(r) &&
			     fabs(r->change) > fabs(best->change)))
				best = r;
		}
	}
	return best;
}

/*
 * The deciding headline rows a test stands on, and in *bound the widest
 * change their 95% intervals allow (relative).
 */
static size_t reply_measured(const struct reply_data *d, double *bound)
{
	size_t rows = 0;

	*bound = 0;
	for (size_t i = 0; i < d->ncmps; i++)
		for (size_t k = 0; k < d->cmps[i].cmp.nrows; k++) {
			const struct compare_row *x = &d->cmps[i].cmp.rows[k];

			if (!x->headline || !x->tested || !compare_row_decides(x))
				continue;
			rows++;
			*bound = fmax(*bound, fmax(fabs(x->change_lo), fabs(x->change_hi)));
		}
	return rows;
}

/*
 * True when every comparison of d ran one image on both sides (compare.h,
 * identical_code): the patch changed no code any suite ran.  *rows is then
 * the count of headline rows measured, as this machine's A/A.
 */
static bool reply_identical(const struct reply_data *d, size_t *rows)
{
	*rows = 0;
	for (size_t i = 0; i < d->ncmps; i++) {
		const struct comparison *c = &d->cmps[i].cmp;

		if (!c->identical_code)
			return false;
		for (size_t k = 0; k < c->nrows; k++)
			*rows += c->rows[k].headline && c->rows[k].tested;
	}
	return d->ncmps > 0;
}

/*
 * A deciding row that stayed inconclusive because its machine cannot
 * resolve it (plan.h, or futility from the job's own rounds): it asked for
 * no more rounds, and it holds back a Tested-by.
 */
static bool reply_row_unresolved(const struct compare_row *x)
{
	return x->unresolvable > 0 && x->verdict == VERDICT_INCONCLUSIVE && compare_row_decides(x);
}

/* " +1.5% [-8.2%, +12.2%]": a row's change and its 95% interval. */
static void reply_interval(FILE *f, const struct compare_row *x)
{
	fprintf(f, " %+.1f%% [%+.1f%%, %+.1f%%]", x->change * 100, x->change_lo * 100,
	        x->change_hi * 100);
}

/* True when some row of d is reply_row_unresolved. */
static bool reply_unresolved(const struct reply_data *d)
{
	for (size_t i = 0; i < d->ncmps; i++)
		for (size_t k = 0; k < d->cmps[i].cmp.nrows; k++)
			if (reply_row_unresolved(&d->cmps[i].cmp.rows[k]))
				return true;
	return false;
}

/*
 * Tested-by: every job ran, none regressed or locked up, not build-only,
 * and the verdict no-change or improvement, which comparison_overall gives
 * only when every deciding row of every comparison was shown unchanged
 * within its margin (or improved); and some headline row was measured.
 */
static bool reply_tested(const struct reply_data *d)
{
	const char *verdict = db_value(d->sub, 0, 5);
	double bound;
	size_t same;

	return d->done &&
	       (reply_measured(d, &bound) > 0 || (reply_identical(d, &same) && same > 0)) &&
	       atoi(PQgetvalue(d->jobs, 0, 0)) == 0 && atoi(PQgetvalue(d->jobs, 0, 1)) == 0 &&
	       atoi(PQgetvalue(d->jobs, 0, 2)) > 0 && atoi(PQgetvalue(d->jobs, 0, 3)) > 0 &&
	       verdict &&
	       (strcmp(verdict, "no-change") == 0 || strcmp(verdict, "improvement") == 0);
}

/*
 * Where a crash happened, from its gdb stacks (lockbench/src/runner.c): the
 * first frame under "<signal handler called>" that is not the C library's
 * (abort, raise), as "FUNCTION at FILE:LINE" into out.  0, or -1 when the
 * stacks do not say.
 */
static int reply_crash_frame(const char *stacks, char *out, size_t len)
{
	const char *p = stacks ? strstr(stacks, "<signal handler called>") : NULL;

	while (p && (p = strchr(p, '\n')) != NULL && *++p == '#') {
		const char *in = strstr(p, " in "), *at, *eol = strchr(p, '\n');
		int fn, loc;

		if (!eol)
			eol = p + strlen(p);
		at = strstr(p, ") at ");
		if (!at || at > eol || !in || in > at || at[5] == '.')
			continue; /* the C library's frames: ./nptl/..., ../sysdeps/... */
		fn = (int)strcspn(in + 4, " (");
		loc = (int)(eol - (at + 5));
		snprintf(out, len, "%.*s at %.*s", fn, in + 4, loc, at + 5);
		return 0;
	}
	return -1;
}

/*
 * The finding of a crash: the patched side's first crash row (a lockup of
 * kind crash: the signal or the sanitizer in its message), the point that
 * ran, and that the base ran it clean; its stack follows the table
 * (reply_stacks).
 */
static void reply_crash_finding(FILE *s, const struct reply_data *d)
{
	size_t count = 0;
	const struct compare_row *r = reply_worst(d, VERDICT_LOCKUP, &count);
	char where[256];

	if (!r) {
		fprintf(s, "locklab noticed that the patched lockbench crashed where the base ran "
		           "clean");
		return;
	}
	/* workload "lockbench": the process itself died (agents/run.c), not one point */
	fprintf(s, "locklab noticed a crash: the patched lockbench");
	if (strcmp(r->workload, "lockbench") != 0)
		fprintf(s, " running %s with %s", r->workload, r->lock);
	if (strcmp(r->workload, "lockbench") != 0 && *r->params_key)
		fprintf(s, " (%s)", r->params_key);
	fprintf(s, " crashed (%s)", r->lockup_message ? r->lockup_message : "no message");
	if (reply_crash_frame(r->lockup_stacks, where, sizeof(where)) == 0)
		fprintf(s, " in %s", where);
	fprintf(s, ", where the base ran %s clean",
	        strcmp(r->workload, "lockbench") != 0 ? "the same point" : "its lockbench");
	if (count > 1)
		fprintf(s, " (%zu crash rows in all)", count);
}

/* The first paragraph: the finding in one sentence. */
static void reply_finding(FILE *f, const struct reply_data *d, bool tested)
{
	const char *verdict = db_value(d->sub, 0, 5);
	char *text = NULL;
	size_t len = 0, count = 0;
	FILE *s = open_memstream(&text, &len);
	const struct compare_row *r;

	if (!s)
		return;
	if (!d->done) {
		fprintf(s, "locklab could not test this: %s",
		        db_value(d->sub, 0, 4) ? db_value(d->sub, 0, 4) : "the job failed");
	} else if (verdict && strcmp(verdict, "crash") == 0) {
		reply_crash_finding(s, d);
	} else if (verdict && strcmp(verdict, "lockup") == 0 &&
	           (r = reply_worst(d, VERDICT_LOCKUP, &count)) != NULL) {
		struct comparison one = {.rows = (struct compare_row *)r, .nrows = 1};
		char *sentence = report_lockup_sentences(&one);
		size_t n = strlen(sentence);

		while (n && sentence[n - 1] == '\n')
			sentence[--n] = 0;
		fprintf(s, "locklab noticed a lockup: %s", sentence);
		if (count > 1)
			fprintf(s, " (%zu lockup rows in all)", count);
		free(sentence);
	} else if (verdict && strcmp(verdict, "splat") == 0) {
		/* the first kernel report the patched kernel printed and the base did not */
		const struct compare_splat *sp = NULL;

		for (size_t i = 0; !sp && i < d->ncmps; i++)
			for (size_t k = 0; !sp && k < d->cmps[i].cmp.nsplats; k++)
				if (d->cmps[i].cmp.splats[k].new_in_patched)
					sp = &d->cmps[i].cmp.splats[k];
		if (sp)
			fprintf(s,
			        "locklab noticed a kernel report the patched kernel printed (in %d "
			        "round%s) and the base never did: %s",
			        sp->patched_fail, sp->patched_fail == 1 ? "" : "s",
			        sp->message ? sp->message : sp->key);
		else
			fprintf(s, "locklab noticed a kernel report the base did not print.");
	} else if (verdict &&
	           (strcmp(verdict, "regression") == 0 || strcmp(verdict, "improvement") == 0) &&
	           (r = reply_worst(d,
	                            strcmp(verdict, "regression") == 0 ? VERDICT_REGRESSION
	                                                               : VERDICT_IMPROVEMENT,
	                            &count)) != NULL) {
		fprintf(s, "locklab noticed a %.1f%% %s of ", fabs(r->change) * 100, verdict);
		reply_point(s, r);
		if (count > 1)
			fprintf(s, " and %zu more %s%s", count - 1, verdict, count > 2 ? "s" : "");
		fputc('.', s);
	} else if (verdict && strcmp(verdict, "inconclusive") == 0) {
		const struct compare_row *wide = NULL;
		size_t deciding = 0;

		/* the rows that held it there, the widest interval named */
		for (size_t i = 0; i < d->ncmps; i++)
			for (size_t k = 0; k < d->cmps[i].cmp.nrows; k++) {
				const struct compare_row *x = &d->cmps[i].cmp.rows[k];

				if (!compare_row_decides(x))
					continue;
				deciding++;
				if (x->verdict != VERDICT_INCONCLUSIVE)
					continue;
				count++;
				if (!wide ||
				    x->change_hi - x->change_lo > wide->change_hi - wide->change_lo)
					wide = x;
			}
		if (!deciding)
			fprintf(
			    s, "locklab measured no row that decides (a headline row of a lock the "
			       "patch touches), so it cannot say nothing changed: no Tested-by.");
		else if (wide) {
			fprintf(s,
			        "locklab could not show every deciding row unchanged: %zu row%s "
			        "stayed inconclusive, ",
			        count, count == 1 ? "" : "s");
			reply_point(s, wide);
			reply_interval(s, wide);
			fprintf(s, " against its +-%g%% margin, so no Tested-by.",
			        wide->margin * 100);
		} else
			fprintf(s, "locklab could not tell a change from noise.");
	} else if (verdict && strcmp(verdict, "no-change") == 0) {
		double bound;
		size_t rows = reply_measured(d, &bound), same = 0;

		if (reply_identical(d, &same) && same > 0)
			fprintf(
			    s,
			    "locklab found the patched build's code identical to the base's (one "
			    "image, %.19s...): the patch changes no code the %s suite%s run%s, so "
			    "it cannot change their figures; %zu row%s measured as this machine's "
			    "own A/A%s",
			    d->cmps[0].cmp.image, PQgetvalue(d->sub, 0, 6),
			    strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "",
			    strchr(PQgetvalue(d->sub, 0, 6), ',') ? "" : "s", same,
			    same == 1 ? "" : "s", tested ? " - Tested-by below." : ".");
		else if (rows == 0 && reply_unresolved(d))
			fprintf(
			    s,
			    "locklab ran the %s suite%s, but this machine cannot resolve any of "
			    "its rows within their margins, so no Tested-by.",
			    PQgetvalue(d->sub, 0, 6),
			    strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "");
		else if (rows == 0)
			fprintf(
			    s,
			    "locklab built and ran the %s suite%s: no benchmark row to compare, so "
			    "no Tested-by.",
			    PQgetvalue(d->sub, 0, 6),
			    strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "");
		else
			fprintf(s,
			        "locklab found no change beyond +-%.1f%% on %zu row%s of the %s "
			        "suite%s%s",
			        bound * 100, rows, rows == 1 ? "" : "s", PQgetvalue(d->sub, 0, 6),
			        strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "",
			        tested ? " - Tested-by below." : ".");
	} else {
		fprintf(s, "locklab finished with the verdict %s.", verdict ? verdict : "none");
	}
	if (fclose(s) == 0 && text)
		reply_wrap(f, text, 0, 0);
	free(text);
}

/*
 * One paragraph per comparison of a finished submission, after the
 * finding: what write says of the comparison (it returns the rows it named;
 * none, no paragraph).
 */
static void reply_paragraphs(FILE *f, const struct reply_data *d,
                             size_t (*write)(FILE *s, const struct stored_comparison *sc))
{
	for (size_t i = 0; d->done && i < d->ncmps; i++) {
		char *text = NULL;
		size_t len = 0, n;
		FILE *s = open_memstream(&text, &len);

		if (!s)
			return;
		n = write(s, &d->cmps[i]);
		if (fclose(s) == 0 && text && n) {
			fputc('\n', f);
			reply_wrap(f, text, 0, 0);
		}
		free(text);
	}
}

/*
 * The code-path notes (instruction counts) that moved: "+1 instruction a
 * pair, 30 -> 31".  They decide nothing alone (compare.h,
 * compare_row_is_note).
 */
static size_t reply_notes(FILE *s, const struct stored_comparison *sc)
{
	const struct comparison *c = &sc->cmp;
	char note[128];
	size_t n = 0;

	for (size_t k = 0; k < c->nrows; k++) {
		const struct compare_row *x = &c->rows[k];

		if (x->control || !report_note_text(x, note, sizeof(note)) ||
		    x->patched.mean == x->base.mean)
			continue;
		fprintf(s, "%s%s.%s: %s", n++ ? "; " : "Code path: ", x->workload, x->lock, note);
		if (x->escalated)
			fprintf(s, " (past %g%% beside a timed row not shown unchanged: it counts)",
			        COMPARE_NOTE_ESCALATE * 100);
	}
	if (n)
		fputs(". An instruction count is a note beside the timed rows: it decides nothing "
		      "alone.",
		      s);
	return n;
}

/*
 * The deciding rows this machine cannot resolve (plan.h: the noise profile
 * up front, or futility from the job's own rounds): each with its interval,
 * never counted as no-change, and each holds back the Tested-by.
 */
static size_t reply_unresolvable(FILE *s, const struct stored_comparison *sc)
{
	const struct comparison *c = &sc->cmp;
	size_t n = 0;

	for (size_t k = 0; k < c->nrows; k++) {
		const struct compare_row *x = &c->rows[k];

		if (!reply_row_unresolved(x))
			continue;
		if (n++ == 0)
			fprintf(s, "This machine (class %s) cannot resolve less than ",
			        sc->machine_class);
		else
			fputs(", ", s);
		fprintf(s, "%.1f%% on ", x->unresolvable * 100);
		reply_point(s, x);
		fprintf(s, " (margin +-%g%%, measured", x->margin * 100);
		reply_interval(s, x);
		fputc(')', s);
	}
	if (n)
		fprintf(
		    s,
		    ": not resolvable on this machine, so %s not counted as no-change and %s "
		    "back a Tested-by, which needs every deciding row shown unchanged. It would "
		    "take a machine class that resolves %s within %s margin, or a margin as "
		    "wide as the figure above.",
		    n == 1 ? "it is" : "they are", n == 1 ? "holds" : "hold",
		    n == 1 ? "it" : "them", n == 1 ? "its" : "their");
	return n;
}

/* What was tested: the series (or git ref), its author and tree. */
/*
 * A range of commits (a pull request): which commit each variant was, as
 * the agent said in its documents ("commit", result.h), or that the range
 * was measured as one patch.
 */
static void reply_commits(FILE *f, const struct reply_data *d)
{
	int n = d->commits ? PQntuples(d->commits) : 0;
	int range = n ? atoi(PQgetvalue(d->commits, n - 1, 2)) : 0;
	char line[256];

	if (range < 2)
		return;
	if (n == 1) {
		snprintf(line, sizeof(line),
		         "the pulled range's %d commits, measured as one patch: more than the "
		         "agent measures one commit at a time (--max-prefixes)",
		         range);
		fputs("commits: ", f);
		reply_wrap(f, line, 9, 9);
		return;
	}
	fprintf(f, "commits: the pulled range's %d, each measured as a series' patch:\n", range);
	for (int i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "%s: %s", PQgetvalue(d->commits, i, 0),
		         PQgetvalue(d->commits, i, 1));
		fprintf(f, "%9s", "");
		reply_wrap(f, line, 9, 18);
	}
}

static void reply_what(FILE *f, const struct reply_data *d)
{
	bool has_head = PQntuples(d->head) == 1;
	int patches = has_head ? atoi(PQgetvalue(d->head, 0, 6)) : 0;
	char *line = NULL;
	size_t len = 0;
	FILE *s;

	if (has_head) {
		s = open_memstream(&line, &len);
		if (!s)
			return;
		fprintf(s, "%s (%d patch%s)", PQgetvalue(d->head, 0, 1), patches,
		        patches == 1 ? "" : "es");
		fputs("series:  ", f);
		if (fclose(s) == 0)
			reply_wrap(f, line, 9, 9);
		free(line);
		fprintf(f, "author:  %s\n", PQgetvalue(d->head, 0, 0));
	} else if (db_value(d->sub, 0, 9)) {
		fprintf(f, "git:     %s %s", PQgetvalue(d->sub, 0, 9), PQgetvalue(d->sub, 0, 10));
		if (db_value(d->sub, 0, 11))
			fprintf(f, " (base %s)", PQgetvalue(d->sub, 0, 11));
		fputc('\n', f);
	}
	if (db_value(d->sub, 0, 12))
		fprintf(f, "tree:    %s (%s)\n", PQgetvalue(d->sub, 0, 12),
		        PQgetvalue(d->sub, 0, 13));
	fprintf(f, "suites:  %s\n", PQgetvalue(d->sub, 0, 6));
	reply_commits(f, d);
}

static void reply_sd(const struct stats_summary *s, char *buf, size_t len)
{
	if (s->n >= 2 && s->mean != 0)
		snprintf(buf, len, "%.0f%%", fabs(s->stddev / s->mean) * 100);
	else
		snprintf(buf, len, "-");
}

/*
 * One comparison: the machine and rounds, then the LKP-style %change block
 * with, per row, the samples behind it and the half-width of the change's
 * confidence interval (the smallest change the row could have told from
 * noise).  Every line fits REPLY_MAX_COLUMNS.
 */
static void reply_table(FILE *f, const struct stored_comparison *sc)
{
	const struct comparison *c = &sc->cmp;
	const struct lb_machine *m = &c->machine;
	size_t hidden = 0, lo = 0, hi = 0, welch = 0;
	char line[256];

	fprintf(f, "suite %s, machine class %s%s\n", c->suite ? c->suite : "?", sc->machine_class,
	        sc->final ? "" : " (not final)");
	snprintf(line, sizeof(line), "%s, %d CPUs, %s, kernel %s", m->hostname ? m->hostname : "?",
	         m->cpus, m->model ? m->model : "?", m->kernel ? m->kernel : "?");
	fputs("machine: ", f);
	reply_wrap(f, line, 9, 9);
	fprintf(f, "rounds:  %d base and %d patched, interleaved on that machine\n", c->base_rounds,
	        c->patched_rounds);
	/* a QEMU TCG guest: say what its figures are worth (report.h) */
	char th[1024];
	if (report_emulated(c))
		reply_wrap(f, report_emulated_note, 0, 10);
	if (report_emulated_thresholds(c, th, sizeof(th)))
		reply_wrap(f, th, 0, 10);
	fputc('\n', f);
	fprintf(f, "%11s%6s%10s%11s%6s%8s%7s  %s\n", "base", "%sd", "%change", "patched", "%sd",
	        "+-ci95", "n", "metric");
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];
		char b[32], bs[16], ch[24], p[32], ps[16], ci[16], n[32], name[512];
		int w;

		if (!bycommit_row_shown(r)) {
			hidden++;
			continue;
		}
		if (r->pairs) {
			lo = !lo || r->pairs < lo ? r->pairs : lo;
			hi = r->pairs > hi ? r->pairs : hi;
		} else if (r->tested) {
			welch++;
		}
		if (r->base.n)
			bycommit_num(r->base.mean, b, sizeof(b));
		else
			snprintf(b, sizeof(b), "-");
		if (r->patched.n)
			bycommit_num(r->patched.mean, p, sizeof(p));
		else
			snprintf(p, sizeof(p), "-");
		reply_sd(&r->base, bs, sizeof(bs));
		reply_sd(&r->patched, ps, sizeof(ps));
		bycommit_change(r, ch, sizeof(ch));
		if (r->tested)
			snprintf(ci, sizeof(ci), "%.1f%%", (r->change_hi - r->change_lo) / 2 * 100);
		else
			snprintf(ci, sizeof(ci), "-");
		if (r->base.n == r->patched.n)
			snprintf(n, sizeof(n), "%zu", r->base.n);
		else
			snprintf(n, sizeof(n), "%zu/%zu", r->base.n, r->patched.n);
		w = snprintf(name, sizeof(name), "%s.%s.%s%s%s%s%s", r->workload, r->lock,
		             r->metric, *r->params_key ? "." : "", r->params_key,
		             r->verdict == VERDICT_LOCKUP ? " (lockup)" : "",
		             r->control ? " (control)" : "");
		snprintf(line, sizeof(line), "%11s%6s%10s%11s%6s%8s%7s  ", b, bs, ch, p, ps, ci, n);
		if (strlen(line) + (size_t)w > REPLY_MAX_COLUMNS) {
			/* the name on its own line first, as long as the line allows */
			fprintf(f, "  %.*s\n", REPLY_MAX_COLUMNS - 2, name);
			fprintf(f, "%.*s\n", (int)strlen(line) - 2, line);
		} else {
			fprintf(f, "%s%s\n", line, name);
		}
	}
	fputc('\n', f);
	fprintf(f, "*: significant, Benjamini-Hochberg q < %g and |change| >= %g%%\n",
	        c->opts.alpha, c->opts.min_effect * 100);
	fputs("+-ci95: half the 95% interval of the change, the smallest change the row can tell "
	      "from noise\nn: samples per side\n",
	      f);
	report_legend_test(f, c, "p", lo, hi);
	if (c->identical_code)
		reply_wrap(f, report_identical_note(c), 0, 0);
	if (welch)
		fprintf(
		    f, "p: Welch's t-test over the samples where too few rounds pair (%zu row%s)\n",
		    welch, welch == 1 ? "" : "s");
	if (hidden)
		fprintf(
		    f,
		    "%zu more row%s (descriptive metrics, controls) changed nothing significant.\n",
		    hidden, hidden == 1 ? "" : "s");
}

#define REPLY_FRAMES      4  /* top frames per thread */
#define REPLY_STACK_LINES 40 /* per mail */

static bool reply_prefix(const char *p, const char *prefix)
{
	return strncmp(p, prefix, strlen(prefix)) == 0;
}

/* A kernel console line's text after its "[  243.120417] " time stamp, else line. */
static const char *reply_console_text(const char *line)
{
	size_t n = line[0] == '[' ? strspn(line + 1, " 0123456789.") : 0;

	if (n && line[n + 1] == ']' && line[n + 2] == ' ')
		return line + n + 3;
	return line;
}

/* Where reply_stack_line is in a stacks text. */
struct reply_stack_pos {
	enum { STACK_NONE, STACK_GDB, STACK_TASK, STACK_TRACE } in;
	int frames; /* shown since the last header */
};

/*
 * Whether a reader needs line p of a lockup's stacks.  gdb's "thread apply
 * all bt" (lockbench/src/runner.c): each "Thread N (...)" header and its
 * top frames ("#0 ..."); the kernel's view of each task ("task TID (comm)
 * state S wchan ..." and its kernel stack); a kernel console: the "INFO:
 * task ... blocked" / "BUG:" / "watchdog:" lines and the top frames after
 * each "Call Trace:".  gdb's chatter is left out.  Text in none of these
 * forms (structured false): its first lines.  p is one line (its kernel
 * console time stamp taken off).
 */
static bool reply_stack_line(const char *p, bool structured, struct reply_stack_pos *pos)
{
	if (!structured)
		return ++pos->frames <= REPLY_FRAMES * 2;
	if (reply_prefix(p, "Thread ") || reply_prefix(p, "task ") || strstr(p, "Call Trace:")) {
		pos->in = p[0] == 'T' ? STACK_GDB : p[0] == 't' ? STACK_TASK : STACK_TRACE;
		pos->frames = 0;
		return true;
	}
	if (reply_prefix(p, "INFO: ") || reply_prefix(p, "BUG: ") ||
	    reply_prefix(p, "watchdog: ")) {
		pos->in = STACK_NONE;
		return true;
	}
	switch (pos->in) {
	case STACK_GDB:
		return p[0] == '#' && ++pos->frames <= REPLY_FRAMES;
	case STACK_TASK:
		return (p[0] == ' ' || reply_prefix(p, "[<")) && ++pos->frames <= REPLY_FRAMES;
	case STACK_TRACE:
		return !strstr(p, "TASK>") && ++pos->frames <= REPLY_FRAMES;
	default:
		return false;
	}
}

/* The stuck threads of each locked-up point (once per point): their top frames. */
/*
 * The first splat only the patched kernel printed, as the kernel printed it:
 * its first line and the lines after it (call trace), at most
 * REPLY_STACK_LINES of them.
 */
static void reply_splat(FILE *f, const struct comparison *c)
{
	for (size_t i = 0; i < c->nsplats; i++) {
		const struct compare_splat *sp = &c->splats[i];
		int lines = 0;

		if (!sp->new_in_patched)
			continue;
		fprintf(f, "\nthe patched kernel's report (%s):\n  %.*s\n", sp->key,
		        REPLY_MAX_COLUMNS - 2, sp->message ? sp->message : sp->key);
		for (const char *p = sp->lines ? sp->lines : ""; *p && lines < REPLY_STACK_LINES;
		     p += strcspn(p, "\n") + (p[strcspn(p, "\n")] ? 1 : 0), lines++) {
			size_t n = strcspn(p, "\n");

			fprintf(f, "  %.*s\n",
			        (int)(n > REPLY_MAX_COLUMNS - 2 ? REPLY_MAX_COLUMNS - 2 : n), p);
		}
		return;
	}
}

static void reply_stacks(FILE *f, const struct comparison *c)
{
	int lines = 0;
	bool any = false;

	for (size_t i = 0; i < c->nrows && lines < REPLY_STACK_LINES; i++) {
		const struct compare_row *r = &c->rows[i];
		const char *st = r->lockup_stacks, *p;
		bool structured, seen = false;
		struct reply_stack_pos pos = {STACK_NONE, 0};

		if (r->verdict != VERDICT_LOCKUP || !st || !*st)
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen =
			    c->rows[k].lockup_stacks && strcmp(c->rows[k].lockup_stacks, st) == 0;
		if (seen)
			continue;
		structured =
		    strstr(st, "Thread ") || strstr(st, "task ") || strstr(st, "Call Trace:");
		if (!any)
			fputs("\nthe stuck threads, top frames:\n", f);
		any = true;
		fprintf(f, "%s.%s%s%s:\n", r->workload, r->lock, *r->params_key ? "." : "",
		        r->params_key);
		for (p = st; *p && lines < REPLY_STACK_LINES;
		     p += strcspn(p, "\n") + (p[strcspn(p, "\n")] ? 1 : 0)) {
			size_t n = strcspn(p, "\n");
			char one[512];

			/* the line alone (what is matched must not run into the next) */
			snprintf(one, sizeof(one), "%.*s",
			         (int)(n < sizeof(one) ? n : sizeof(one) - 1), p);
			if (n == 0 || !reply_stack_line(reply_console_text(one), structured, &pos))
				continue;
			fprintf(f, "  %.*s\n",
			        (int)(n > REPLY_MAX_COLUMNS - 2 ? REPLY_MAX_COLUMNS - 2 : n), p);
			lines++;
		}
	}
}

static const char *reply_identity(void)
{
	return srv_cfg.tested_by && *srv_cfg.tested_by ? srv_cfg.tested_by : srv_cfg.mail_from;
}

static void reply_link(char *buf, size_t len, long long id)
{
	if (srv_cfg.public_url && *srv_cfg.public_url)
		snprintf(buf, len, "%s/#/submissions/%lld", srv_cfg.public_url, id);
	else
		snprintf(buf, len, "http://%s/#/submissions/%lld", srv_cfg.listen, id);
}

/* The body of d's reply; new string or NULL. */
static char *reply_body(const struct reply_data *d)
{
	const char *verdict = db_value(d->sub, 0, 5);
	bool tested = reply_tested(d);
	char *body = NULL, link[512];
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	if (!f)
		return NULL;
	reply_link(link, sizeof(link), d->id);
	reply_finding(f, d, tested);
	reply_paragraphs(f, d, reply_unresolvable);
	reply_paragraphs(f, d, reply_notes);
	fputc('\n', f);
	reply_what(f, d);
	for (size_t i = 0; d->done && i < d->ncmps; i++) {
		fputc('\n', f);
		reply_table(f, &d->cmps[i]);
		if (d->pre)
			bycommit_print(f, &d->cmps[i].cmp, &d->pre[i], REPLY_MAX_COLUMNS);
		reply_stacks(f, &d->cmps[i].cmp);
		reply_splat(f, &d->cmps[i].cmp);
	}
	fprintf(f, "\ndetails: %s\n", link);
	if (tested) {
		fprintf(f, "\nTested-by: %s\n", reply_identity());
	} else if (d->done && verdict &&
	           (strcmp(verdict, "regression") == 0 || strcmp(verdict, "lockup") == 0 ||
	            strcmp(verdict, "splat") == 0 || strcmp(verdict, "crash") == 0)) {
		fputc('\n', f);
		reply_wrap(
		    f,
		    "If you fix the issue in a separate patch (not just a new version of this "
		    "one), kindly add these tags:",
		    0, 0);
		fprintf(f, "| Reported-by: %s\n| Closes: %s\n", reply_identity(), link);
	}
	if (fclose(f) != 0) {
		free(body);
		return NULL;
	}
	return body;
}

/* Load what the reply says.  DB_ABORT with *status/msg when there is none to make. */
static int reply_load(PGconn *c, long long id, struct reply_data *d, int *status, char *msg,
                      size_t msglen)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	const char *state;

	memset(d, 0, sizeof(*d));
	d->id = id;
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	d->sub =
	    db_exec(c,
	            "SELECT s.state, s.subject, s.reply_to_msgid, s.notify, s.reason, s.verdict, "
	            "array_to_string(s.suites, ', '), s.source, s.url, s.git_url, s.git_ref, "
	            "s.git_base, t.name, t.branch FROM submissions s LEFT JOIN trees t ON "
	            "t.id = s.tree_id WHERE s.id = $1",
	            1, p);
	if (!d->sub)
		return db_failure();
	if (PQntuples(d->sub) != 1) {
		*status = 404;
		snprintf(msg, msglen, "no submission %lld", id);
		return DB_ABORT;
	}
	state = PQgetvalue(d->sub, 0, 0);
	d->done = strcmp(state, "done") == 0;
	if (!d->done && strcmp(state, "failed") != 0) {
		*status = 409;
		snprintf(msg, msglen, "submission %lld is %s: no reply before it is finished", id,
		         state);
		return DB_ABORT;
	}
	d->head =
	    db_exec(c,
	            "SELECT author, subject, message_id, mail_references, mail_to, mail_cc, "
	            "(SELECT count(*) FROM patches WHERE submission_id = $1 AND NOT is_cover) "
	            "FROM patches WHERE submission_id = $1 ORDER BY seq LIMIT 1",
	            1, p);
	d->jobs = db_exec(c,
	                  "SELECT count(*) FILTER (WHERE state <> 'done'), count(*) FILTER (WHERE "
	                  "verdict IN ('regression', 'lockup')), count(*), count(*) FILTER (WHERE "
	                  "suite <> 'build') FROM jobs WHERE submission_id = $1",
	                  1, p);
	/*
	 * the reviewers: Reviewed-by and Acked-by trailers in the patches and
	 * in the list's replies to them (mail_trailers)
	 */
	d->reviewers =
	    db_exec(c,
	            "SELECT string_agg(DISTINCT who, ', ') FROM (SELECT m[2] AS who FROM patches, "
	            "regexp_matches(body, '^(Reviewed-by|Acked-by):[ \\t]*(.+?)[ \\t]*$', "
	            "'gn') m WHERE submission_id = $1 UNION SELECT t.who FROM patches p JOIN "
	            "mail_trailers t ON t.target = p.message_id WHERE p.submission_id = $1 AND "
	            "t.kind IN ('Reviewed-by', 'Acked-by')) r",
	            1, p);
	/* the pulled commits each variant was: patch-1 ... patched */
	d->commits = db_exec(
	    c,
	    "SELECT variant, label, range FROM (SELECT DISTINCT ON (r.variant) r.variant, "
	    "r.document->'commit'->>'label' AS label, r.document->'commit'->>'range' AS range "
	    "FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.submission_id = $1 AND "
	    "r.document ? 'commit' ORDER BY r.variant, r.id) c ORDER BY variant = 'patched', "
	    "length(variant), variant",
	    1, p);
	if (!d->head || !d->jobs || !d->reviewers || !d->commits)
		return db_failure();
	if (!d->done)
		return DB_OK;
	int rc = verdicts_load(c, id, &d->cmps, &d->ncmps);
	if (rc != DB_OK)
		return rc;
	d->pre = calloc(d->ncmps ? d->ncmps : 1, sizeof(*d->pre));
	if (!d->pre)
		return DB_FAIL;
	for (size_t i = 0; i < d->ncmps && rc == DB_OK; i++)
		rc = bycommit_load(c, d->cmps[i].job_id, &d->pre[i]);
	return rc;
}

/*
 * The mail of d: To the notify address when given (alone), else the
 * author with the list and reviewers in Cc.  New message in *out and its
 * Message-ID in *msgid; DB_ABORT with 422 when there is nobody to send to.
 */
static int reply_build(const struct reply_data *d, char **out, char **msgid, char **rcpt,
                       int *status, char *msg, size_t msglen)
{
	bool head = PQntuples(d->head) == 1;
	const char *notify = db_value(d->sub, 0, 3);
	const char *to = notify && *notify ? notify : head ? PQgetvalue(d->head, 0, 0) : NULL;
	char *cc = NULL, *body = NULL;
	int rc = DB_FAIL;

	*out = *msgid = *rcpt = NULL;
	if (!(notify && *notify) && head) {
		const char *parts[3] = {db_value(d->head, 0, 4), db_value(d->head, 0, 5),
		                        db_value(d->reviewers, 0, 0)};
		size_t n = 1;

		for (int i = 0; i < 3; i++)
			n += parts[i] ? strlen(parts[i]) + 2 : 0;
		cc = calloc(1, n);
		for (int i = 0; cc && i < 3; i++)
			if (parts[i] && *parts[i]) {
				if (*cc)
					strcat(cc, ", ");
				strcat(cc, parts[i]);
			}
	}
	body = reply_body(d);
	if (!body)
		goto out;
	{
		struct mail_reply r = {
		    .from = srv_cfg.mail_from,
		    .to = to,
		    .cc = cc,
		    .subject = head ? PQgetvalue(d->head, 0, 1) : PQgetvalue(d->sub, 0, 1),
		    .in_reply_to = db_value(d->sub, 0, 2),
		    .references = head ? db_value(d->head, 0, 3) : NULL,
		    .domain = srv_cfg.mail_domain,
		    .body = body,
		    .tag = d->id,
		    .date = time(NULL),
		};
		char err[256];

		*out = mail_build_reply(&r, msgid, err, sizeof(err));
		if (!*out) {
			*status = 422;
			snprintf(msg, msglen, "no reply for submission %lld: %s", d->id, err);
			rc = DB_ABORT;
			goto out;
		}
	}
	{
		size_t n = strlen(to) + (cc ? strlen(cc) + 2 : 0) + 1;

		*rcpt = malloc(n);
		if (*rcpt)
			snprintf(*rcpt, n, "%s%s%s", to, cc && *cc ? ", " : "",
			         cc && *cc ? cc : "");
	}
	rc = DB_OK;
out:
	free(cc);
	free(body);
	return rc;
}

int reply_queue(PGconn *c, long long submission)
{
	struct reply_data d;
	char *mail = NULL, *msgid = NULL, *rcpt = NULL, idbuf[24], msg[256];
	int status = 0, rc;

	snprintf(idbuf, sizeof(idbuf), "%lld", submission);
	{
		const char *p[1] = {idbuf};
		PGresult *res = db_exec(c,
		                        "SELECT 1 FROM outbox WHERE submission_id = $1 AND kind = "
		                        "'reply'",
		                        1, p);

		if (!res)
			return db_failure();
		rc = PQntuples(res);
		PQclear(res);
		if (rc)
			return DB_OK; /* replied already */
	}
	rc = reply_load(c, submission, &d, &status, msg, sizeof(msg));
	if (rc == DB_OK)
		rc = reply_build(&d, &mail, &msgid, &rcpt, &status, msg, sizeof(msg));
	if (rc == DB_OK) {
		bool send = outbox_sending();
		char *subj = mail_reply_subject(PQntuples(d.head) == 1 ? PQgetvalue(d.head, 0, 1)
		                                                       : PQgetvalue(d.sub, 0, 1));

		{
			const char *q[7] = {
			    idbuf, rcpt,  subj ? subj : "",        db_value(d.sub, 0, 2),
			    mail,  msgid, send ? "queued" : "held"};

			rc = db_run(
			    c,
			    "INSERT INTO outbox (submission_id, recipients, subject, in_reply_to, "
			    "message, message_id, state) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			    7, q);
		}
		free(subj);
	} else if (rc == DB_ABORT) {
		/* nobody to send to (or not finished): nothing to keep, say why */
		fprintf(stderr, "locklab-server: %s\n", msg);
		rc = DB_OK;
	}
	free(mail);
	free(msgid);
	free(rcpt);
	reply_data_release(&d);
	return rc;
}

int reply_get(PGconn *c, long long submission, char **out, int *status, char *msg, size_t msglen)
{
	struct reply_data d;
	char idbuf[24], *msgid = NULL, *rcpt = NULL;
	const char *p[1] = {idbuf};
	PGresult *res;
	int rc;

	*out = NULL;
	snprintf(idbuf, sizeof(idbuf), "%lld", submission);
	res = db_exec(c,
	              "SELECT message FROM outbox WHERE submission_id = $1 AND kind = 'reply' "
	              "ORDER BY id DESC LIMIT 1",
	              1, p);
	if (!res)
		return db_failure();
	if (PQntuples(res) == 1) {
		*out = strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
		return *out ? DB_OK : DB_FAIL;
	}
	PQclear(res);
	rc = reply_load(c, submission, &d, status, msg, msglen);
	if (rc == DB_OK)
		rc = reply_build(&d, out, &msgid, &rcpt, status, msg, msglen);
	free(msgid);
	free(rcpt);
	reply_data_release(&d);
	return rc;
}
