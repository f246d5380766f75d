/*
 * procrun.h - the one process runner of the server and the agent (git's
 * run-command is the model): a command is an argv array, never a string
 * for a shell.  The agent's spawn.c (environment, sandbox, pids cgroup) and
 * the server tracker's git (trackgit.c) both start their processes here;
 * nothing else in server/ or agents/ forks or execs (tests/321-agent-noshell.t
 * checks the agent).
 *
 * The child gets stdin from /dev/null, stdout and stderr each to a file
 * descriptor of the caller's or captured into a buffer up to a cap, the
 * environment the caller gives and nothing else of the parent's open files.
 * The parent waits for it, reading what it captures, until it ends, a
 * wall-clock deadline passes (the child, or its whole process group, is
 * killed) or the caller's stop flag is raised.
 */
#ifndef LOCKLAB_NETLIB_PROCRUN_H
#define LOCKLAB_NETLIB_PROCRUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Limits of the child (setrlimit before exec); 0 leaves one unset. */
struct procrun_limits {
	int cpu_s;     /* RLIMIT_CPU, seconds of CPU (hard limit 5 s above) */
	long mem_mb;   /* RLIMIT_AS, MiB of address space */
	int nproc;     /* RLIMIT_NPROC */
	long fsize_mb; /* RLIMIT_FSIZE, MiB per file written */
	bool no_core;  /* RLIMIT_CORE 0 */
};

struct procrun_cmd {
	const char *const *argv; /* argv[0] is looked up in PATH */
	const char *const *envp; /* the child's whole environment, NULL-terminated */
	const char *cwd;         /* NULL: ours */
	int out_fd;              /* the child's stdout, or PROCRUN_CAPTURE */
	int err_fd;              /* the child's stderr, or PROCRUN_CAPTURE */
	size_t capture_max;      /* cap of each captured stream; 0: 1 MiB */
	int wall_s;              /* 0: no deadline */
	/*
	 * A process group of its own, killed whole at the deadline, at a stop
	 * and when the child has ended (what it left running), and the child
	 * killed when this process dies.  Otherwise the child alone is killed.
	 */
	bool own_group;
	/*
	 * After the child ended: how long a captured pipe that something it
	 * left behind holds open is still read (0: what is there already).
	 */
	int linger_ms;
	/*
	 * An exec that fails is procrun's -1 ("cannot run ARGV0: why") rather
	 * than the child's exit 127 with the reason on its stderr.
	 */
	bool report_exec;
	const char *cgroup; /* a cgroup folder the child enters before exec, or NULL */
	struct procrun_limits lim;
	const atomic_int *stop; /* raised: the child is killed early; may be NULL */
	/* called with the child's pid at the deadline, before the kill */
	void (*on_deadline)(pid_t pid, void *arg);
	void *arg;
};

#define PROCRUN_CAPTURE (-1)

struct procrun_result {
	int status;     /* exit status, 128+signal when killed */
	bool timed_out; /* the deadline killed it */
	double wall_s;
	char *out, *err; /* captured stdout, stderr: NUL-terminated, owned; NULL when not */
	size_t out_len, err_len;
	bool out_truncated, err_truncated; /* more than capture_max was written */
};

/*
 * Run cmd to its end.  Returns 0 when it ran (see res: status, timed_out),
 * -1 when it could not be started or waited for (err says why).  res must
 * be released with procrun_result_release either way.
 */
int procrun(const struct procrun_cmd *cmd, struct procrun_result *res, char *err, size_t errlen);
void procrun_result_release(struct procrun_result *res);

/*
 * Replace this process with argv[0] (found on PATH) and its argv, in the
 * environment it has: what a program started as git's ssh does
 * (sshpin.h).  Returns only on failure (-1, errno set).
 */
int procrun_replace(const char *const argv[]);

#endif
