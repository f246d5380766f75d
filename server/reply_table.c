/*
 * reply_table.c - the reply's fixed-width parts (reply_internal.h): prose
 * wrapped at REPLY_WRAP columns, the %change table of one comparison and
 * the stuck threads' top frames from the documents' stacks and splats.
 */
#include "reply.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bycommit.h"
#include "reply_internal.h"
#include "report.h"
#include "verdicts.h"

/* Prose is wrapped here; tables and stacks may use up to REPLY_MAX_COLUMNS. */
#define REPLY_WRAP 72

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
void reply_wrap(FILE *f, const char *text, size_t start, int indent)
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
void reply_table(FILE *f, const struct stored_comparison *sc)
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
void reply_splat(FILE *f, const struct comparison *c)
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

void reply_stacks(FILE *f, const struct comparison *c)
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
