/* procrun.c - see procrun.h. */
#include "procrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strutil.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_limit(int what, rlim_t v)
{
	struct rlimit rl = {v, v};
	setrlimit(what, &rl);
}

/* In the child: its files, group and limits, then exec.  Only async-signal-safe calls. */
static void child_exec(const struct procrun_cmd *c, int out_fd, int err_fd, int exec_fd)
{
	int in = open("/dev/null", O_RDONLY);
	if (c->own_group) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	}
	if (in < 0 || out_fd < 0 || err_fd < 0)
		_exit(126);
	if (dup2(in, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	/* nothing of the parent's (its sockets, the spool) reaches the child */
	if (exec_fd >= 0) {
		/* kept to tell the parent why exec failed; closed by the exec */
		if (dup2(exec_fd, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC))
			_exit(126);
		exec_fd = 3;
	}
	if (syscall(SYS_close_range, exec_fd >= 0 ? 4U : 3U, ~0U, 0U))
		for (int fd = exec_fd >= 0 ? 4 : 3; fd < 4096; fd++)
			close(fd);
	if (c->cgroup) {
		char f[1300];
		/* snprintf is not async-signal-safe in theory */
		size_t l = strlen(c->cgroup);
		if (l + 14 > sizeof(f))
			_exit(126);
		memcpy(f, c->cgroup, l);
		memcpy(f + l, "/cgroup.procs", 14);
		int fd = open(f, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			dprintf(2, "spawn: cannot enter the pids cgroup %s\n", c->cgroup);
			_exit(126);
		}
		close(fd);
	}
	signal(SIGPIPE, SIG_DFL);
	if (c->lim.cpu_s > 0) {
		struct rlimit rl = {(rlim_t)c->lim.cpu_s, (rlim_t)c->lim.cpu_s + 5};
		setrlimit(RLIMIT_CPU, &rl);
	}
	if (c->lim.mem_mb > 0)
		set_limit(RLIMIT_AS, (rlim_t)c->lim.mem_mb << 20);
	if (c->lim.nproc > 0)
		set_limit(RLIMIT_NPROC, (rlim_t)c->lim.nproc);
	if (c->lim.fsize_mb > 0)
		set_limit(RLIMIT_FSIZE, (rlim_t)c->lim.fsize_mb << 20);
	if (c->lim.no_core)
		set_limit(RLIMIT_CORE, 0);
	if (c->cwd && chdir(c->cwd)) {
		dprintf(2, "spawn: cannot enter %s: %s\n", c->cwd, strerror(errno));
		_exit(126);
	}
	execvpe(c->argv[0], (char *const *)c->argv, (char *const *)c->envp);
	if (exec_fd >= 0) {
		int e = errno;
		if (write(exec_fd, &e, sizeof(e)) != sizeof(e))
			_exit(127);
	}
	dprintf(2, "spawn: %s: %s\n", c->argv[0], strerror(errno));
	_exit(127);
}

/* A captured stream: the pipe's reading end and where it goes. */
struct procrun_stream {
	int fd; /* -1: not captured, or closed */
	char **buf;
	size_t *len;
	bool *truncated;
};

/*
 * Wait up to wait_ms for the captured pipes, then read what each has, up
 * to max bytes kept a stream (the rest read and dropped).  Returns how many
 * were ready; a pipe at its end is closed and its fd set to -1.
 */
static int pump(struct procrun_stream *s, size_t max, int wait_ms)
{
	struct pollfd p[2];
	char chunk[8192];
	int n;

	for (int i = 0; i < 2; i++)
		p[i] = (struct pollfd){s[i].fd, POLLIN, 0};
	n = poll(p, 2, wait_ms);
	if (n <= 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (s[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t r = read(s[i].fd, chunk, sizeof(chunk));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			close(s[i].fd);
			s[i].fd = -1;
			continue;
		}
		size_t take = (size_t)r;
		if (*s[i].len + take > max) {
			take = max - *s[i].len;
			*s[i].truncated = true;
		}
		memcpy(*s[i].buf + *s[i].len, chunk, take);
		*s[i].len += take;
		(*s[i].buf)[*s[i].len] = '\0';
	}
	return n;
}

static bool pump_open(const struct procrun_stream *s)
{
	return s[0].fd >= 0 || s[1].fd >= 0;
}

/* The errno the child sent before its exec failed, or 0 (the exec worked). */
static int exec_errno(int fd)
{
	int e = 0;
	ssize_t r;
	while ((r = read(fd, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	return r == sizeof(e) ? e : 0;
}

int procrun(const struct procrun_cmd *c, struct procrun_result *res, char *err, size_t errlen)
{
	struct procrun_stream s[2] = {
	    {-1, &res->out, &res->out_len, &res->out_truncated},
	    {-1, &res->err, &res->err_len, &res->err_truncated},
	};
	int fds[2] = {c->out_fd, c->err_fd}, wr[2] = {-1, -1}, ex[2] = {-1, -1};
	int st = 0, rc = -1, e;
	size_t max = c->capture_max ? c->capture_max : 1 << 20;
	double start = now_s(), until;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	for (int i = 0; i < 2; i++) {
		int p[2];
		if (fds[i] != PROCRUN_CAPTURE)
			continue;
		if (pipe2(p, O_CLOEXEC)) {
			strutil_errf(err, errlen, "pipe: %s", strerror(errno));
			goto out;
		}
		s[i].fd = p[0];
		fds[i] = wr[i] = p[1];
		*s[i].buf = strutil_xmalloc(max + 1);
		(*s[i].buf)[0] = '\0';
	}
	if (c->report_exec && pipe2(ex, O_CLOEXEC)) {
		strutil_errf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		strutil_errf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(c, fds[0], fds[1], ex[1]);
	if (c->own_group)
		setpgid(pid, pid);
	for (int i = 0; i < 2; i++)
		if (wr[i] >= 0) {
			close(wr[i]);
			wr[i] = -1;
		}
	if (ex[1] >= 0) {
		close(ex[1]);
		ex[1] = -1;
		e = exec_errno(ex[0]);
		if (e) {
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			strutil_errf(err, errlen, "cannot run %s: %s", c->argv[0], strerror(e));
			goto out;
		}
	}
	for (;;) {
		if (pump_open(s))
			pump(s, max, 20);
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			strutil_errf(err, errlen, "waitpid: %s", strerror(errno));
			kill(c->own_group ? -pid : pid, SIGKILL);
			goto out;
		}
		bool late = c->wall_s > 0 && now_s() - start > c->wall_s;
		if (late || (c->stop && atomic_load(c->stop))) {
			if (late) {
				res->timed_out = true;
				if (c->on_deadline)
					c->on_deadline(pid, c->arg);
			}
			if (c->own_group)
				kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		if (!pump_open(s)) {
			struct timespec d = {0, 20 * 1000000};
			nanosleep(&d, NULL);
		}
	}
	if (c->own_group)
		kill(-pid, SIGKILL); /* whatever it left running in its group */
	/* what it wrote before it ended (a leftover in another group may hold a pipe) */
	until = now_s() + c->linger_ms / 1e3;
	while (pump_open(s)) {
		double left = until - now_s();
		int ready = pump(s, max, left > 0 ? (left > 0.1 ? 100 : (int)(left * 1e3)) : 0);
		if (now_s() >= until && (!ready || c->linger_ms > 0))
			break;
	}
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	rc = 0;
out:
	res->wall_s = now_s() - start;
	for (int i = 0; i < 2; i++) {
		if (s[i].fd >= 0)
			close(s[i].fd);
		if (wr[i] >= 0)
			close(wr[i]);
	}
	if (ex[0] >= 0)
		close(ex[0]);
	if (ex[1] >= 0)
		close(ex[1]);
	return rc;
}

void procrun_result_release(struct procrun_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

int procrun_replace(const char *const argv[])
{
	execvp(argv[0], (char *const *)argv);
	return -1;
}
