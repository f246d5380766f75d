/*
 * run_internal.h - shared by the rounds' files only; job.h declares what
 * the rest of the agent calls.
 *
 * run.c runs a variant's round and retries it, run_document.c makes what
 * the run left into the document posted, run_paired.c pairs base with
 * patched.  Each function's full contract is the comment above its
 * definition.
 */
#ifndef LOCKLAB_AGENTS_RUN_INTERNAL_H
#define LOCKLAB_AGENTS_RUN_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "job.h"
#include "spawn.h"

/* ---- run_document.c ---- */

/* Where capture_stacks writes a hung run's stacks. */
struct stack_arg {
	char path[4096];
};

void capture_stacks(pid_t pid, void *arg);
char *variant_outcome(struct job *j, const struct variant *v, int round,
                      const struct spawn_result *r, const char *log, const char *out,
                      const char *stacks_path, const char *duet, bool *retry);

/* ---- run.c ---- */

bool debug_variant(const struct job *j, const struct variant *v);

/* ---- run_paired.c ---- */

/*
 * How this job's single-thread points pair base with patched: a duet (at
 * once, a half of the CPUs each: cfg.duet and 2 CPUs or more), lockstep
 * (turns of 0.5 ms on one CPU: cfg.lockstep), ABBA (a sample a side:
 * cfg.abba), or not at all (each side's run measures them).
 */
enum pairing { PAIR_NONE, PAIR_DUET, PAIR_LOCKSTEP, PAIR_ABBA };

enum pairing job_pairing(const struct job *j);
const char *pairing_instrument(enum pairing m);
const char *paired_workloads(enum pairing m);
char *merge_duet(const char *doc, const char *path, const char *instrument);
int run_duet(struct job *j, const struct variant v[2], int round, char paths[2][2100]);

#endif
