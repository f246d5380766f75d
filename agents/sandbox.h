/*
 * sandbox.h - run a command from a submitted patch (a build, a benchmark)
 * without network and under time limits, capturing its output.
 *
 * Network: bubblewrap (--unshare-net) when installed, otherwise a new
 * network namespace with unshare(2) when we may (root), otherwise none, and
 * sandbox_describe says which.  Limits: RLIMIT_CPU and a wall-clock deadline;
 * the whole process group is killed at the deadline, after an optional hook
 * (stack capture) has looked at it.
 */
#ifndef LOCKLAB_AGENT_SANDBOX_H
#define LOCKLAB_AGENT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum sandbox_net { SANDBOX_NET_BWRAP, SANDBOX_NET_UNSHARE, SANDBOX_NET_NONE };

struct sandbox_opts {
	int wall_s;           /* 0: no deadline */
	int cpu_s;            /* 0: no CPU limit */
	bool isolate_net;     /* false for trusted steps (git fetch) */
	const char *cwd;      /* NULL: inherit */
	const char *out_path; /* stdout+stderr go here (appended); NULL: /dev/null */
	/* called with the child's pid at the deadline, before the kill */
	void (*on_deadline)(pid_t pid, void *arg);
	void *arg;
};

struct sandbox_result {
	int status;     /* exit status, 128+signal when killed */
	bool timed_out; /* the deadline killed it */
	double wall_s;
};

/* Which isolation this machine gives; decided once. */
enum sandbox_net sandbox_net_mode(void);
const char *sandbox_describe(void);

/* Run argv; returns 0 when it ran (see res), -1 when it could not start. */
int sandbox_run(char *const argv[], const struct sandbox_opts *o, struct sandbox_result *res,
                char *err, size_t errlen);

/* Last n lines of a file, newly allocated ("" when unreadable). */
char *sandbox_tail(const char *path, int n);

/* Ask the current sandbox_run to stop early (SIGTERM handling). */
void sandbox_request_stop(void);

#endif
