/*
 * sandbox.h - what code built from a submission may see and touch: the
 * bubblewrap command line around it.  spawn.h runs it (spawn_cmd.sandbox).
 *
 * Inside: the host's root read-only (--ro-bind / /), a private /dev, /proc
 * and size-limited /tmp, no network, IPC, PIDs, UTS or cgroup namespaces of
 * the host (--unshare-all), a new session (no TIOCSTI), every capability
 * dropped, the sandbox dies with the agent, a cleared environment (PATH,
 * HOME=/tmp, LANG and what the policy adds).  The agent's own folders (the
 * workdir: spool, mirrors, jobs, base cache; the kernel cache; the token
 * file) are hidden under empty tmpfs or /dev/null; only the policy's
 * writable paths are bound back read-write and its readable paths
 * read-only.  Limits (CPU, memory, processes, file size, wall clock) are
 * spawn's.
 *
 * Without a working bubblewrap nothing untrusted runs, unless the operator
 * said so (--allow-unsandboxed): then the command runs with limits only
 * and the agent says so at start and in each job's log.
 */
#ifndef LOCKLAB_AGENT_SANDBOX_H
#define LOCKLAB_AGENT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SANDBOX_MAX_PATHS 8

struct sandbox_policy {
	const char *visible[SANDBOX_MAX_PATHS];  /* bound read-only first (under a private /tmp) */
	const char *hidden[SANDBOX_MAX_PATHS];   /* then folders or files made empty */
	const char *writable[SANDBOX_MAX_PATHS]; /* bound read-write at the same path */
	const char *readable[SANDBOX_MAX_PATHS]; /* bound read-only at the same path */
	const char *chdir;                       /* working folder inside; NULL: / */
	bool kvm;                                /* /dev/kvm for qemu (kernel runs) */
	long tmp_mb;                             /* size of /tmp and /dev/shm; 0: 256 */
};

/* Add path to one of the policy's lists; -1 when the list is full. */
int sandbox_add(const char *list[SANDBOX_MAX_PATHS], const char *path);

/*
 * The user code from a submission runs as when the agent runs as root
 * (default 65534:65534, nobody): bwrap starts as root, so that it can bind
 * what the agent can reach, and setpriv makes the command that user with
 * no groups and no capabilities; the folders it may write are given to
 * that user first (spawn.c).  As any other user, bwrap runs in a user
 * namespace of that user.  Either way /root, /home, the agent's $HOME
 * and /etc/shadow are hidden.
 */
void sandbox_set_user(uid_t uid, gid_t gid);
/* Whether sandboxed commands drop root; then *uid, *gid are whose they become. */
bool sandbox_drops_root(uid_t *uid, gid_t *gid);
/* Whether bubblewrap works on this machine (probed once). */
bool sandbox_available(void);

/* Run untrusted code without a sandbox when bubblewrap does not work. */
void sandbox_allow_unsandboxed(bool yes);

/* One line for the agent's start-up log: what isolation untrusted code gets. */
const char *sandbox_describe(void);

/*
 * The command line that runs argv under policy p with environment envp
 * ("NAME=value"; HOME is set to /tmp): a new NULL-terminated array of new
 * strings (the caller frees each and the array).  NULL, with err, when
 * there is no sandbox and running without one was not allowed.
 */
char **sandbox_wrap(const struct sandbox_policy *p, const char *const argv[],
                    const char *const envp[], char *err, size_t errlen);

/* Last n lines of a file, newly allocated ("" when unreadable). */
char *sandbox_tail(const char *path, int n);

#endif
