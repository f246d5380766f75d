/*
 * report.h - the tables locking developers trade on the lists, rendered from
 * a comparison.  Layouts follow the lists: AIM7 bands of users with JPM,
 * the perf-bench threads/baseline/stddev/patched/stddev/overhead grid, the
 * LKP %stddev %change %stddev block with a fail:runs block for lockups.
 * Every table says how many samples stand behind each row and marks rows
 * whose change is significant.
 */
#ifndef LOCKLAB_REPORT_H
#define LOCKLAB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "compare.h"

enum report_format {
	REPORT_AIM7,
	REPORT_PERF,
	REPORT_LKP,
	REPORT_TEXT,
	REPORT_JSON,
};

/* Parse "aim7" ... "json"; returns 0 or -1. */
int report_format_parse(const char *name, enum report_format *out);

/*
 * True when the comparison's figures come from a QEMU TCG guest (the
 * machine model says "QEMU TCG"); under KVM or on a real machine, false.
 * Every table and reply then carries report_emulated_note, one line.
 */
bool report_emulated(const struct comparison *c);
extern const char report_emulated_note[];
/*
 * The line after the note when the documents say which lockup thresholds
 * the emulated guest kernel used (machine.guest_thresholds): "emulated:
 * guest kernel lockup thresholds: ...", into out; false (out empty) when
 * the comparison is not emulated or they do not say.
 */
bool report_emulated_thresholds(const struct comparison *c, char *out, size_t len);
extern const char report_thresholds_lead[]; /* "emulated: guest kernel lockup thresholds: " */

/*
 * The AIM7 table's band of a user count, as AIM7 reports band them: 1-9 users
 * (0), 10-100 (1), 101-1000 (2), 1001-10000 (3), ...; each band ends on a
 * power of ten, so users 10, 100 | 200, 1000 | 1100, 2000 print as
 * "10 - 100", "200 - 1000", "1100 - 2000".  -1 for no user count.
 */
int report_aim7_band(long long users);

/*
 * One band of a single run's AIM7 table (report_run_bands): the AIM7 band
 * of users, the one count a run measured in it, and that point's figure.
 */
struct report_band_row {
	long long umin, umax; /* the AIM7 band: 10 - 100 users */
	long long users;      /* the count measured in it */
	double mean;          /* the mean of the point's samples */
	size_t n;             /* its samples; 0: no figure */
	const char *note;     /* "lockup", "not run: ...", or NULL */
	const char *kind;     /* a lockup's kind ("rcu-stall"), or NULL */
};

/*
 * A single run's figures by AIM7's bands of users, laid out as AIM7 reports
 * on the mutex rewrite print theirs (users | avg throughput), one column for this run, with the
 * count each band was measured at, its samples and a note (a lockup, a band
 * left out and why).  Returns 0 or -1 on a write error.
 */
int report_run_bands(FILE *out, const char *title, const char *unit,
                     const struct report_band_row *rows, size_t n);

/*
 * The legend's lines on what the rows' paired tests took from each round,
 * lead ("p, q" or "p") first, each at most 100 columns: the test over the
 * rounds lo..hi both sides ran (of ln(patched/base), or of differences when
 * no row took logs), how the change and its interval come back from logs, and how many
 * rows took raw differences because a round mean was <= 0.
 */
/*
 * The legend line of a comparison whose sides ran one image
 * (struct comparison, identical_code); a static buffer of the calling thread.
 */
const char *report_identical_note(const struct comparison *c);

void report_legend_test(FILE *out, const struct comparison *c, const char *lead, size_t lo,
                        size_t hi);

/*
 * A code-path note's figure for people (compare_row_is_note): "+1
 * instruction a pair, 30 -> 31"; "unchanged, 30" when it did not move.
 * False (buf empty) for a row that is no note or has no figure a side.
 */
bool report_note_text(const struct compare_row *r, char *buf, size_t len);

/* Write the table(s) to out.  Returns 0 or -1 on a write error. */
int report_render(const struct comparison *c, enum report_format fmt, FILE *out);

/*
 * Sentences for people: "at 8 threads, the patched build locked up on hot
 * with kmutex: no progress for 2.0 s." one per lockup point.  Caller frees.
 */
char *report_lockup_sentences(const struct comparison *c);

#endif
