/*
 * spawn.h - how the agent starts processes: the child's environment,
 * sandbox and pids cgroup around netlib's runner (procrun.h, shared with
 * the server; git's run-command is the model).  A command is an argv
 * array, never a string for a shell:
 * whatever came from a submission is data.  Nothing in agents/ calls
 * system, popen, fork or an exec itself (tests/321-agent-noshell.t checks).
 *
 * The child gets: stdin from /dev/null; a cleared environment holding only
 * the variables of childenv_pass (PATH, HOME, LANG, ...) plus the caller's
 * extra "NAME=value" entries (the token never reaches it); its own process
 * group; stdout and stderr appended to a file or captured into a buffer up
 * to a cap; resource limits (setrlimit in the child, and a pids cgroup when
 * the machine gives one); a wall-clock deadline after which the whole
 * process group is killed (after an optional hook, e.g. stack capture).
 * With a sandbox policy, the command runs inside bubblewrap (sandbox.h).
 */
#ifndef LOCKLAB_AGENT_SPAWN_H
#define LOCKLAB_AGENT_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox_policy;

/* Limits of the child and everything it starts; 0 leaves one unset. */
struct spawn_limits {
	int cpu_s;     /* RLIMIT_CPU, seconds of CPU per process */
	long mem_mb;   /* RLIMIT_AS, MiB of address space per process */
	int nproc;     /* RLIMIT_NPROC and, when available, a pids cgroup */
	long fsize_mb; /* RLIMIT_FSIZE, MiB per file written */
};

struct spawn_cmd {
	const char *const *argv; /* argv[0] is looked up in PATH */
	const char *cwd;         /* NULL: the agent's */
	const char *const *env;  /* extra "NAME=value" entries, NULL-terminated, or NULL */
	const char *out_path;    /* stdout+stderr appended here; NULL: /dev/null */
	bool capture;            /* stdout into the result's buffer (stderr to out_path) */
	size_t capture_max;      /* cap of that buffer; 0: 1 MiB */
	int wall_s;              /* 0: no deadline */
	struct spawn_limits lim;
	const struct sandbox_policy *sandbox; /* NULL: run as it is (trusted steps) */
	/* called with the child's pid at the deadline, before the kill */
	void (*on_deadline)(pid_t pid, void *arg);
	void *arg;
};

struct spawn_result {
	int status;     /* exit status, 128+signal when killed */
	bool timed_out; /* the deadline killed it */
	double wall_s;
	char *out; /* captured stdout, NUL-terminated (owned; spawn_result_release) */
	size_t out_len;
	bool out_truncated; /* more than capture_max was written */
};

/*
 * Run cmd to its end.  Returns 0 when it ran (see res: status, timed_out),
 * -1 when it could not be started (err says why).  res must be released
 * with spawn_result_release either way.
 */
int spawn_run(const struct spawn_cmd *cmd, struct spawn_result *res, char *err, size_t errlen);
void spawn_result_release(struct spawn_result *res);

/* Ask the current spawn_run to stop early (SIGTERM handling, lease lost). */
void spawn_request_stop(void);
/* Forget an earlier request (a new job starts). */
void spawn_clear_stop(void);

/*
 * The processes under root (children, their children, ...) from /proc,
 * root first, bubblewrap's own processes left out; at most max.
 */
int spawn_descendants(pid_t root, pid_t *out, int max);
/* Its command line, words separated by spaces ("" when gone). */
void spawn_cmdline(pid_t pid, char *out, size_t len);

/* Which process-count limit this machine enforces (for the start-up line). */
const char *spawn_describe_limits(void);

/*
 * Replace this process with argv[0] (found on PATH) and its argv, in the
 * environment it has: what the agent started as git's ssh does
 * (netlib/sshpin.h).
 * Returns only on failure (-1, errno set).
 */
int spawn_replace(const char *const argv[]);

#endif
