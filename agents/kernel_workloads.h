/*
 * kernel_workloads.h - which guest workloads and locktorture types a kernel
 * job runs: a fixed small core, and what the paths its series touches add
 * (the table in kernel_workloads.c), each with the reason it runs.  build.c
 * chooses from `git diff --name-only`; run.c passes the lists to
 * `lockbench kernel run --workloads ... --types ...`.
 */
#ifndef LOCKLAB_AGENT_KERNEL_WORKLOADS_H
#define LOCKLAB_AGENT_KERNEL_WORKLOADS_H

#include <stddef.h>

/*
 * The debug pass's guest workloads whatever the patch touches: the ones that
 * take the kernel's own mutexes (pipe->mutex, ep->mtx, a seq_file's lock);
 * build.c adds what the touched paths chose.
 */
#define KW_DEBUG_WORKLOADS "pipe-mutex,epoll-ctl,seq-read"

/* at most this many workloads and types together, each with its reason */
#define KW_MAX 24

struct kw_why {
	char name[48]; /* a guest workload, or "locktorture:TYPE" */
	char why[160]; /* "core" or the first touched path that chose it (+N more) */
	int paths;     /* how many touched paths chose it (0: the core alone) */
};

struct kw_choice {
	char workloads[256]; /* --workloads value, comma-separated, in choosing order */
	char types[256];     /* --types value */
	struct kw_why why[KW_MAX];
	int n;
};

/* c: the core only (every kernel job runs it). */
void kw_init(struct kw_choice *c);
/* Add what one touched path (relative to the tree's top) chooses, if anything. */
void kw_add_path(struct kw_choice *c, const char *path);
/* The core plus what paths choose: len bytes of NUL-separated paths (git diff -z). */
void kw_choose(struct kw_choice *c, const char *paths, size_t len);
/* One line of c->why[i]: "pipe-mutex: fs/pipe.c (pipe->mutex)". */
void kw_line(const struct kw_choice *c, int i, char *out, size_t outlen);

#endif
