/*
 * agent.h - locklab-agent: claims one job at a time and carries it from a
 * patch series to posted results.
 *
 * A job: mirror the tree (a cached bare clone per URL), a base worktree and
 * a series worktree; `git am -3` the series one patch at a time, building
 * after each prefix (patch-1 ... patched) so the report can say which patch
 * moved a number; run interleaved rounds (base, patched, then patched, base,
 * ...) of lockbench on the narrowest set of locks the series touches (plus
 * the pthread baseline); post each document as it finishes with an
 * idempotency key; heartbeat the lease from a second thread.
 *
 * Nothing is lost: a document that cannot be posted goes to the spool and is
 * retried with backoff (and at the next start) until the server takes it.
 */
#ifndef LOCKLAB_AGENT_H
#define LOCKLAB_AGENT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "api.h"

struct agent_cfg {
	const char *server;
	const char *token;
	const char *workdir;
	const char *name;
	const char *native_tree; /* URL or path of the tree holding lockbench */
	bool once;
	int build_timeout_s;
	int run_timeout_s;
	int users_timeout_s;      /* the same for a run of the users suite (run.c) */
	int max_prefixes;         /* run every prefix for series up to this many patches */
	bool duet;                /* single-thread points of base and patched at once (run.c) */
	bool abba;                /* or in turns, a sample a side, A B B A (run.c) */
	bool lockstep;            /* or in turns of 0.5 ms on one CPU (run.c; before abba) */
	int noise_interval_s;     /* seconds between noise measurements (noise.c); 0: never */
	int noise_rounds;         /* paired A/A rounds of one measurement */
	int poll_s;               /* idle wait between claims */
	int jobs;                 /* make -j */
	const char *lockbench;    /* trusted lockbench for kernel jobs (kernel build/run) */
	const char *base_cache;   /* base lockbench builds, kept by commit (build.c) */
	const char *kernel_cache; /* base kernel builds, kept by commit */
	bool kernel_debug;        /* the debug pass before a kernel job's rounds (run.c) */
	const char *fetch_allow;  /* LOCKLAB_FETCH_ALLOW for submitted git URLs (netpolicy.h) */
	bool allow_local_trees;   /* a job's git URL may be its tree's local path (codesource.h) */
	const char *token_file;   /* where the token was read from (hidden from the sandbox) */
	/* limits of everything built from a submission (spawn.h) */
	long sandbox_mem_mb;   /* address space per process */
	int sandbox_procs;     /* processes and threads */
	long sandbox_fsize_mb; /* size of one file written */
	long sandbox_tmp_mb;   /* the private /tmp */
};

struct agent {
	struct agent_cfg cfg;
	struct api api;
	char *spool_dir;
	char *mirrors_dir;
	char *jobs_dir;
	atomic_int stop; /* SIGTERM/SIGINT seen */
	/*
	 * The Idempotency-Key of the claim in flight: kept while the server gave
	 * no answer (unreachable, 5xx), so the claim sent again gets the job the
	 * lost answer held instead of leaving it leased to nobody; "" after an
	 * answer, and a new one is drawn for the next claim.
	 */
	char claim_key[40];
	/*
	 * The accelerator for `lockbench kernel run`: "auto" until a kernel run
	 * has probed it, then what that run settled on ("kvm" or "tcg", read
	 * from the document's machine.model), kept for the agent's lifetime so
	 * the probe (and a KVM that aborts or hangs) is paid once per start.
	 */
	char accel[8];
	/* WORKDIR/bin/locklab-ssh, git's ssh for a submitted ssh:// URL (sshpin.h) */
	char ssh_helper[4096];
};

/* Make the work folders; returns 0 or -1 with a message on stderr. */
int agent_init(struct agent *ag, const struct agent_cfg *cfg);
void agent_release(struct agent *ag);

/*
 * One pass: flush the spool, claim, run the job if one came.
 * Returns 1 when a job ran, 0 when the queue was empty, -1 when the server
 * could not be reached.
 */
int agent_step(struct agent *ag);

#endif
