/*
 * console.h - reading a kernel's serial console (`lockbench kernel run`):
 * lockups, the kernel checkers' reports ("splats"), locktorture's figures
 * and the guest lockbench's document.
 *
 * Pure: text in, findings out, no I/O, so every reader is unit-tested on
 * captured consoles (lockbench/tests/test_console.c).  Lines are the ones
 * console_lines() gives: no '\r', no "[    1.234567] " time stamp.
 */
#ifndef LOCKBENCH_CONSOLE_H
#define LOCKBENCH_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

#include "result.h"
#include "strutil.h"

/* Lines of a lockup's call traces kept in its stacks. */
#define CONSOLE_STACK_LINES 80
/* Lines of a splat kept after its first line. */
#define CONSOLE_SPLAT_LINES 80

/*
 * Split text (modified in place) into lines without '\r' and without the
 * printk time stamp.  Returns a new array of pointers into text (the caller
 * frees the array, not the lines), the count in *n; NULL when text is NULL.
 */
char **console_lines(char *text, size_t *n);

/*
 * The kind of lockup a console line reports, or NULL: "hung-task",
 * "soft-lockup", "workqueue-lockup", "rcu-stall", "panic", or "oops" (an
 * Oops, a general protection fault, a page fault or NULL dereference in
 * the kernel, "kernel BUG at").  Other "BUG: " reports (might_sleep,
 * scheduling while atomic, spinlock debugging, KASAN) are splats, not
 * lockups: the kernel goes on.
 */
const char *console_lockup_kind(const char *line);

/* A locktorture statistics line with "Fail:" > 0 or "!!!". */
bool console_torture_failed(const char *line);

/* How a boot ended, for console_detect_lockup. */
struct console_end {
	bool ended;     /* the end marker came */
	bool timed_out; /* the deadline ended the boot */
	double secs;    /* how long the boot took */
	/*
	 * A boot under the progress rule (boot.c) that timed out: whether its
	 * hard cap ended it (else no progress for its limit) and how long it
	 * had been since the guest's last progress.  progress_rule false: the
	 * deadline counted from the start, as before.
	 */
	bool progress_rule;
	bool capped;
	double since_progress_s;
};

/*
 * The first lockup of the console.  On a find, *kind is set, msg holds the
 * kernel's line and stacks (appended to) the up to CONSOLE_STACK_LINES lines
 * after it.  A console that never reached its end marker is a lockup too:
 * "deadline" (timed out: "no end of test after N s (deadline)", under the
 * progress rule followed by ": no progress for P s" or ": the boot's cap;
 * last progress P s before") or "crash" (the guest stopped), with its last
 * 30 lines.  Returns whether a lockup was found.
 */
bool console_detect_lockup(char **lines, size_t n, const struct console_end *end, const char **kind,
                           char *msg, size_t msglen, struct strutil_buf *stacks);

/*
 * The LKP-style key of a splat's first line, or false when the line does
 * not start a report.  Keys as the kernel test robot's dmesg statistics
 * write them: the kernel's words, numbers as '#', no offsets, no task
 * names, '_' for blanks, e.g.
 *   WARNING:at_kernel/locking/mutex.c:#__mutex_lock
 *   WARNING:possible_circular_locking_dependency_detected
 *   BUG:sleeping_function_called_from_invalid_context_at_kernel/locking/mutex.c
 *   BUG:KASAN:slab-out-of-bounds_in_pipe_write
 *   INFO:task_blocked_for_more_than#seconds
 *   Oops, general_protection_fault
 */
bool console_splat_key(const char *line, char *key, size_t keylen);

/* One splat: its key, the kernel's first line and the lines after it. */
struct console_splat {
	char *key;
	char *message;
	char *lines; /* up to CONSOLE_SPLAT_LINES lines, through the call trace */
};

struct console_splats {
	struct console_splat *v;
	size_t n;
};

/*
 * Append each report of the console to out, the first of each key only
 * (a repeated WARNING is one finding).  A report's lines end with its call
 * trace ("</TASK>" or "---[ end trace"), the next report, or
 * CONSOLE_SPLAT_LINES.  Returns the number added.  out starts zeroed;
 * console_splats_release frees it.
 */
size_t console_find_splats(char **lines, size_t n, struct console_splats *out);
void console_splats_release(struct console_splats *s);

/*
 * locktorture's cumulative "Writes:  Total: N  Max/Min: a/b ... Fail: k"
 * (tag "Writes:") or "Reads :" lines become metric name (unit, higher is
 * better) on run: the mean of the per-interval rates as one sample, and
 * for writes "fairness" (min/max per-thread acquisitions).  Nothing is
 * added when the console has no such line.
 */
void console_add_torture_metrics(struct lb_run *run, char **lines, size_t n, const char *tag,
                                 const char *name, const char *unit, int interval, int secs);

/*
 * Take the guest's kernel release and CPU count from its "LOCKLAB-GUEST"
 * line into res->machine; model becomes "QEMU <accel> guest on <host>".
 */
void console_note_guest(struct lb_result *res, char **lines, size_t n, const char *accel);

/*
 * The text between LOCKLAB-JSON-BEGIN and LOCKLAB-JSON-END (new string,
 * "" when empty), or NULL without the end marker; *lb_rc is the rc= of the
 * end marker, -1 when absent.
 */
char *console_guest_json(char **lines, size_t n, int *lb_rc);

/*
 * The guest's memory from its init's "LOCKLAB-MEM available_kb=A
 * total_kb=T" lines (every 20 s while the guest lockbench runs): the least
 * MemAvailable seen and MemTotal, in kB.  Returns how many lines there were
 * (0: none, and the outputs are left alone).
 */
size_t console_guest_memory(char **lines, size_t n, long *min_avail_kb, long *total_kb);

/*
 * The points the guest lockbench finished, read back from its table on the
 * console, for a boot that locked up before the guest's document came (the
 * document is written at the end; the table, a line per point, goes to the
 * console as each point ends, when the document goes to ttyS1).  Each line
 *   pipe-mutex  kernel  duration_ms=200,users=2000  ops_per_sec 27,637 ops/s ±123.7% n=2
 * becomes a run in res with its params and its first metric: the mean as
 * printed (thousands rounded), no samples (a document without samples counts
 * its value as one sample), better by the unit (lower for ms, us, ns, s; else
 * higher); the other metrics of the line are not kept.  A line
 *   ...  LOCKUP (stall): message
 * becomes a run with that lockup.  Lines between LOCKLAB-JSON-BEGIN ttyS1 and
 * LOCKLAB-JSON-END only; a line a kernel message broke is skipped.  Returns
 * how many runs were added; *last_key, when not NULL, is set to a new string
 * "workload lock key" of the last one (NULL when none).
 */
size_t console_guest_table_runs(char **lines, size_t n, struct lb_result *res, char **last_key);

/*
 * Whether a console line (as qemu gave it: a '\r' and a printk time stamp
 * are allowed) is a sign that the guest lockbench's work moved on: a
 * finished point's table line (a figure or "LOCKUP (kind): ..."), or a line
 * of its own ("lockbench: suite ...", a point that failed, a long point's
 * "lockbench: ... operations so far" from --progress-s).  The guest
 * init's LOCKLAB-MEM lines (a timer's, every 20 s), its markers and the
 * kernel's messages are not.  boot.c's deadline counts from the last such
 * line.
 */
bool console_guest_progress(const char *line);
/* A locktorture boot's progress: any line of the kernel's, not the guest init's LOCKLAB- lines. */
bool console_torture_progress(const char *line);

/*
 * Whether a boot the deadline ended (timed_out, not ended) did so without
 * a line from a kernel detector (hung task, soft lockup, RCU stall, panic,
 * Oops) or a locktorture failure: the detectors are armed in every boot,
 * so a guest that fell silent without one of them speaking was most likely
 * held back by a loaded host, and kernel run boots it once more
 * (docs/kernel.md).
 */
bool console_silent_deadline(char **lines, size_t n, bool ended, bool timed_out);

#endif
