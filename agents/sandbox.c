/* sandbox.c - see sandbox.h. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop_requested;

void sandbox_request_stop(void)
{
	atomic_store(&stop_requested, 1);
}

static bool have_bwrap(void)
{
	/* bwrap must also work: inside some containers it is installed but refused */
	pid_t pid = fork();
	int st;
	if (pid < 0)
		return false;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execlp("bwrap", "bwrap", "--dev-bind", "/", "/", "--unshare-net", "true",
		       (char *)NULL);
		_exit(127);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool can_unshare_net(void)
{
	pid_t pid = fork();
	int st;
	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) == 0 ? 0 : 1);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

enum sandbox_net sandbox_net_mode(void)
{
	static int mode = -1;
	if (mode < 0)
		mode = have_bwrap()        ? SANDBOX_NET_BWRAP
		       : can_unshare_net() ? SANDBOX_NET_UNSHARE
		                           : SANDBOX_NET_NONE;
	return (enum sandbox_net)mode;
}

const char *sandbox_describe(void)
{
	switch (sandbox_net_mode()) {
	case SANDBOX_NET_BWRAP:
		return "bubblewrap --unshare-net, CPU and wall-clock limits";
	case SANDBOX_NET_UNSHARE:
		return "own network namespace (unshare), CPU and wall-clock limits";
	default:
		return "NO network isolation (no bubblewrap, no unshare): CPU and wall-clock "
		       "limits "
		       "only";
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int sandbox_run(char *const argv[], const struct sandbox_opts *o, struct sandbox_result *res,
                char *err, size_t errlen)
{
	enum sandbox_net mode = o->isolate_net ? sandbox_net_mode() : SANDBOX_NET_NONE;
	double start = now_s();
	int st = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		int in = open("/dev/null", O_RDONLY);
		int out = o->out_path
		              ? open(o->out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
		              : open("/dev/null", O_WRONLY);
		if (in < 0 || out < 0)
			_exit(126);
		dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2); /*
		               * The agent's own make flags (an agent started from make, as the
		               * tests and make demo do) must not reach the submitted tree's make.
		               */
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		unsetenv("MAKEOVERRIDES");
		unsetenv("BUILD");
		if (o->cwd && chdir(o->cwd)) {
			dprintf(2, "sandbox: cannot enter %s: %s\n", o->cwd, strerror(errno));
			_exit(126);
		}
		if (o->cpu_s > 0) {
			struct rlimit rl = {(rlim_t)o->cpu_s, (rlim_t)o->cpu_s + 5};
			setrlimit(RLIMIT_CPU, &rl);
		}
		if (mode == SANDBOX_NET_UNSHARE && unshare(CLONE_NEWNET)) {
			dprintf(2, "sandbox: unshare(CLONE_NEWNET): %s\n", strerror(errno));
			_exit(126);
		}
		if (mode == SANDBOX_NET_BWRAP) {
			int n = 0;
			while (argv[n])
				n++;
			char **bw = calloc((size_t)n + 8, sizeof(char *));
			int k = 0;
			bw[k++] = "bwrap";
			bw[k++] = "--dev-bind";
			bw[k++] = "/";
			bw[k++] = "/";
			bw[k++] = "--unshare-net";
			bw[k++] = "--die-with-parent";
			for (int i = 0; i < n; i++)
				bw[k++] = argv[i];
			bw[k] = NULL;
			execvp("bwrap", bw);
			dprintf(2, "sandbox: bwrap: %s\n", strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		dprintf(2, "sandbox: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			kill(-pid, SIGKILL);
			return -1;
		}
		bool late = o->wall_s > 0 && now_s() - start > o->wall_s;
		if (late || atomic_load(&stop_requested)) {
			if (late) {
				res->timed_out = true;
				if (o->on_deadline)
					o->on_deadline(pid, o->arg);
			}
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		struct timespec d = {0, 20 * 1000000};
		nanosleep(&d, NULL);
	}
	kill(-pid, SIGKILL); /* whatever it left running in its group */
	res->wall_s = now_s() - start;
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

char *sandbox_tail(const char *path, int n)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL, *out;
	long len;
	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	long from = len > 65536 ? len - 65536 : 0;
	fseek(f, from, SEEK_SET);
	buf = calloc(1, (size_t)(len - from) + 1);
	if (!buf || fread(buf, 1, (size_t)(len - from), f) != (size_t)(len - from)) {
		fclose(f);
		free(buf);
		return strdup("");
	}
	fclose(f);
	/* walk back n newlines */
	char *p = buf + strlen(buf);
	if (p > buf && p[-1] == '\n')
		p--;
	int lines = 0;
	while (p > buf) {
		if (p[-1] == '\n' && ++lines == n)
			break;
		p--;
	}
	out = strdup(p);
	free(buf);
	return out;
}
