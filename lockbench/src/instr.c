/* instr.c - instructions per lock/unlock pair under callgrind (instr.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "instr.h"
#include "strutil.h"
#include "util.h"

/* valgrind cannot run a program built with AddressSanitizer (make asan) */
#if defined(__SANITIZE_ADDRESS__)
#define INSTR_ABSENT "lockbench was built with AddressSanitizer, which valgrind cannot run"
#elif defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define INSTR_HAVE_CALLGRIND 1
#endif
#endif
#ifndef INSTR_HAVE_CALLGRIND
#define INSTR_HAVE_CALLGRIND 0
#endif
#ifndef INSTR_ABSENT
#define INSTR_ABSENT "lockbench was built without valgrind's callgrind.h"
#endif

#define INSTR_WARMUP      1000
#define INSTR_DEADLINE_MS 300000
#define INSTR_OUT         "cg.out"

struct instr_job {
	const struct lock_ops *ops;
	int failed;
};

/* On its own thread, as the uncontended workload runs its pairs. */
static void *instr_thread(void *arg)
{
	struct instr_job *j = arg;
	void *l = lock_new(j->ops);

	if (!l) {
		j->failed = 1;
		return NULL;
	}
	/* resolve the PLT and fault in the lock's pages before counting */
	for (int i = 0; i < INSTR_WARMUP; i++) {
		j->ops->lock(l);
		j->ops->unlock(l);
	}
#if INSTR_HAVE_CALLGRIND
	CALLGRIND_ZERO_STATS;
	CALLGRIND_TOGGLE_COLLECT;
#endif
	for (int i = 0; i < INSTR_PAIRS; i++) {
		j->ops->lock(l);
		j->ops->unlock(l);
	}
#if INSTR_HAVE_CALLGRIND
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_DUMP_STATS_AT(j->ops->name);
#endif
	lock_free(j->ops, l);
	return NULL;
}

int instr_child_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct instr_job j = {lock_find(argv[i]), 0};
		pthread_t t;

		if (!j.ops) {
			fprintf(stderr, "lockbench instr-count: unknown lock '%s'\n", argv[i]);
			return 2;
		}
		if (pthread_create(&t, NULL, instr_thread, &j)) {
			fprintf(stderr, "lockbench instr-count: cannot create a thread\n");
			return 1;
		}
		pthread_join(t, NULL);
		if (j.failed) {
			fprintf(stderr, "lockbench instr-count: cannot create lock %s\n", argv[i]);
			return 1;
		}
	}
	return 0;
}

/* The last line of the valgrind log, for a failure message. */
static void log_tail(const char *path, char *out, size_t outlen)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;
	char *text, *end, *start;

	snprintf(out, outlen, "(no output)");
	if (!strutil_read_file(path, &sb) && sb.len) {
		text = sb.buf;
		end = text + sb.len;
		while (end > text && (end[-1] == '\n' || end[-1] == ' '))
			*--end = 0;
		start = strrchr(text, '\n');
		snprintf(out, outlen, "%s", start ? start + 1 : text);
	}
	strutil_buf_release(&sb);
}

/*
 * One callgrind dump: the lock it was dumped for ("desc: Trigger: Client
 * Request: NAME") and its instruction total ("totals: N").
 */
static int read_dump(const char *path, char *name, size_t namelen, double *total)
{
	static const char trig[] = "desc: Trigger: Client Request: ";
	struct strutil_buf sb = STRUTIL_BUF_INIT;
	char *line, *save = NULL;
	int found = 0;

	if (strutil_read_file(path, &sb)) {
		strutil_buf_release(&sb);
		return -1;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, trig, sizeof(trig) - 1)) {
			snprintf(name, namelen, "%s", line + sizeof(trig) - 1);
			found |= 1;
		} else if (!strncmp(line, "totals: ", 8) || !strncmp(line, "summary: ", 9)) {
			*total = strtod(strchr(line, ' ') + 1, NULL);
			found |= 2;
		}
	}
	strutil_buf_release(&sb);
	return found == 3 ? 0 : -1;
}

/* Collect every dump of dir into per_pair; the files are removed. */
static void collect(const char *dir, const struct lock_ops *const *locks, size_t n,
                    double *per_pair)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400], name[128];
	double total = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, INSTR_OUT ".", sizeof(INSTR_OUT)) &&
		    !read_dump(path, name, sizeof(name), &total))
			for (size_t i = 0; i < n; i++)
				if (!strcmp(locks[i]->name, name))
					per_pair[i] = total / INSTR_PAIRS;
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Wait for pid up to ms; kill its group past that.  Returns the status or -1. */
static int wait_bounded(pid_t pid, int ms)
{
	struct timespec tick = {0, 20 * 1000000};
	int status;

	for (int waited = 0; waited < ms; waited += 20) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

int instr_count_locks(const struct lock_ops *const *locks, size_t n, double *per_pair, char *why,
                      size_t whylen)
{
	const char *valgrind = getenv("LOCKBENCH_VALGRIND");
	const char *tmp = getenv("TMPDIR");
	char exe[4096], dir[4096], outopt[4200], logpath[4200], tail[512];
	const char **argv = NULL;
	int rc = -1, errpipe[2] = {-1, -1}, child_errno = 0, status;
	pid_t pid;
	ssize_t got;

	for (size_t i = 0; i < n; i++)
		per_pair[i] = -1;
	if (!INSTR_HAVE_CALLGRIND) {
		snprintf(why, whylen, "%s", INSTR_ABSENT);
		return 1;
	}
	if (!n)
		return 0;
	if (!valgrind || !*valgrind)
		valgrind = "valgrind";
	got = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (got <= 0) {
		snprintf(why, whylen, "cannot find lockbench's own program: %s", strerror(errno));
		return -1;
	}
	exe[got] = 0;
	snprintf(dir, sizeof(dir), "%s/lockbench-instr.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(why, whylen, "cannot make a folder in %s: %s", tmp && *tmp ? tmp : "/tmp",
		         strerror(errno));
		return -1;
	}
	snprintf(outopt, sizeof(outopt), "--callgrind-out-file=%s/" INSTR_OUT, dir);
	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	argv = strutil_xreallocarray(NULL, n + 10, sizeof(*argv));
	size_t k = 0;
	argv[k++] = valgrind;
	argv[k++] = "-q";
	argv[k++] = "--tool=callgrind";
	argv[k++] = "--collect-atstart=no";
	argv[k++] = outopt;
	argv[k++] = exe;
	argv[k++] = "instr-count";
	for (size_t i = 0; i < n; i++)
		argv[k++] = locks[i]->name;
	argv[k] = NULL;

	if (pipe2(errpipe, O_CLOEXEC)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int log = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		setpgid(0, 0);
		if (in >= 0)
			dup2(in, 0);
		if (log >= 0) {
			dup2(log, 1);
			dup2(log, 2);
		}
		execvp(argv[0], (char *const *)argv);
		int e = errno;
		(void)!write(errpipe[1], &e, sizeof(e));
		_exit(127);
	}
	setpgid(pid, pid);
	close(errpipe[1]);
	errpipe[1] = -1;
	got = read(errpipe[0], &child_errno, sizeof(child_errno));
	status = wait_bounded(pid, INSTR_DEADLINE_MS);
	if (got == (ssize_t)sizeof(child_errno)) {
		snprintf(why, whylen, "cannot run %s: %s (install Debian's valgrind)", valgrind,
		         strerror(child_errno));
		rc = child_errno == ENOENT || child_errno == EACCES ? 1 : -1;
		goto out;
	}
	if (status == -1) {
		snprintf(why, whylen, "valgrind did not finish within %d s",
		         INSTR_DEADLINE_MS / 1000);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		log_tail(logpath, tail, sizeof(tail));
		snprintf(why, whylen, "valgrind %s %d: %s",
		         WIFEXITED(status) ? "exited with status" : "was killed by signal",
		         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail);
		goto out;
	}
	rc = 0;
out:
	collect(dir, locks, n, per_pair);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (per_pair[i] < 0) {
			snprintf(why, whylen, "callgrind gave no count for %s", locks[i]->name);
			rc = -1;
		}
	if (errpipe[0] >= 0)
		close(errpipe[0]);
	if (errpipe[1] >= 0)
		close(errpipe[1]);
	free(argv);
	return rc;
}
