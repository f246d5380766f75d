/*
 * track_internal.h - shared by the tracker's files only; the public
 * interface is track.h.
 *
 * trackgit.c runs git (from an argv array, never a shell), trackrun.c makes
 * and reads the A/B runs, track.c polls the branches and runs the thread,
 * trackalert.c confirms steps, keeps the alerts and bisects, trackmail.c
 * writes a bisected alert's mail, trackapi.c
 * holds the HTTP handlers.  Each function's full contract is the comment
 * above its definition.  Strings handed in are borrowed; nothing here keeps
 * them past the call.
 */
#ifndef LOCKLAB_SERVER_TRACK_INTERNAL_H
#define LOCKLAB_SERVER_TRACK_INTERNAL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- trackgit.c ---- */

/*
 * Run git with argv (argv[0] "git") in a cleared environment plus extra
 * (NULL-terminated, at most 2; may be NULL).  *out (may be NULL) is new,
 * the caller frees it; err gets git's first line of stderr.  The exit
 * status, or -1 when git could not run.
 */
int track_git_env(const char *const *argv, const char *const *extra, char **out, char *err,
                  size_t errlen);
/* track_git_env without extra variables. */
int track_git(const char *const *argv, char **out, char *err, size_t errlen);
/* The commit rev names in the mirror, hex into sha (41 bytes); 0 or -1. */
int track_rev(const char *mirror, const char *rev, char *sha);

/* ---- trackrun.c ---- */

/* A tracked tree as the runs need it; the strings are borrowed. */
struct track_tree {
	const char *id, *name, *url, *branch, *suites;
};

/* One series' verdict row of a run (track_row_of). */
struct track_row {
	char verdict[32];
	double change, base_mean, patched_mean, change_lo, change_hi;
	char unit[32];
};

/* The track_runs id of that attempt of the A/B run base -> commit, made when new; -1. */
long long track_run_attempt(PGconn *c, const struct track_tree *t, const char *purpose,
                            const char *base, const char *commit, int attempt, int rounds);
/* The first A/B run base -> commit (attempt 0, --min-rounds). */
long long track_run(PGconn *c, const struct track_tree *t, const char *purpose, const char *base,
                    const char *commit);
/* Submission sub's row for series into *row: 0, 1 when it has none, -1 on a database error. */
int track_row_of(PGconn *c, const char *sub, const char *const series[5], struct track_row *row);
/* The tree of id into *t, its strings borrowed from the result (the caller PQclears it); NULL. */
PGresult *track_tree_of(PGconn *c, const char *id, struct track_tree *t);

/* ---- track.c ---- */

/* Wake the tracker thread now (a poke). */
void track_wake(void);

/* ---- trackalert.c ---- */

/* Record an event of alert (state, who, note: note may be NULL). */
void track_event(PGconn *c, const char *alert, const char *state, const char *who,
                 const char *note);
/* A step of one series between two commits (good, bad]; the strings are borrowed. */
struct track_step {
	const char *tree, *branch;
	const char *const *series; /* machine class, workload, lock, metric, params */
	const char *good, *bad;
	const char *found_by; /* "ab-head", "ab-sample" or "changepoint" */
};

/* Open the alert of confirmed regression st (confirmed by run): its id, 0 when covered, -1. */
long long track_alert_open(PGconn *c, const struct track_step *st, const struct track_row *row,
                           const char *run, const char *new_note, const char *confirmed_note);
/* Mark fixed the open alerts of st's series whose step the improvement st follows. */
void track_alert_fix(PGconn *c, const struct track_step *st, const char *note);
/* Act on the regression and improvement rows of ended head or sample run (its id). */
void track_ab_steps(PGconn *c, const char *run);
/* Open the alerts of the faults (splat, lockup, crash) of ended head or sample run. */
void track_fault_steps(PGconn *c, const char *run);
/* True when an alert's metric names a fault (splat, lockup, crash), not a figure. */
bool track_metric_is_fault(const char *metric);
/* Judge the proposed steps whose A/B ended: alerts, fixes. */
void track_judge_candidates(PGconn *c);
/* One move of each open bisection. */
void track_bisect(PGconn *c);

/* ---- trackmail.c ---- */

/* Queue the mail of bisected alert aid (once: none when the outbox has it). */
void track_mail_alert(PGconn *c, const char *aid);

#endif
