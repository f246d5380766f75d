/* spawn.c - see spawn.h. */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "sandbox.h"
#include "strutil.h"

const char *const spawn_env_pass[] = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "SSH_AUTH_SOCK",
    /* sanitizer builds (make asan) report where the tests look */
    "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
    /* the trusted lockbench's kernel files and the tests' stand-in KVM device */
    "LOCKLAB_KERNEL_DIR", "LOCKLAB_KVM_DEVICE", NULL};

static atomic_int stop_requested;

void spawn_request_stop(void)
{
	atomic_store(&stop_requested, 1);
}

void spawn_clear_stop(void)
{
	atomic_store(&stop_requested, 0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The pids cgroup a child is put in: cgroup v1's pids hierarchy or a v2
 * hierarchy with the pids controller, under the agent's own cgroup, when the
 * agent may create one (root, or a delegated subtree).  Found once.
 */
static char cg_base[1024];
static int cg_state = -1; /* -1 unknown, 0 none, 1 usable */

static bool cg_try(const char *base)
{
	char dir[1200], f[1300];
	snprintf(dir, sizeof(dir), "%s/locklab-probe-%d", base, (int)getpid());
	if (mkdir(dir, 0700))
		return false;
	snprintf(f, sizeof(f), "%s/pids.max", dir);
	bool ok = access(f, W_OK) == 0;
	rmdir(dir);
	if (ok)
		snprintf(cg_base, sizeof(cg_base), "%s", base);
	return ok;
}

static bool cg_usable(void)
{
	if (cg_state >= 0)
		return cg_state == 1;
	cg_state = 0;
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		char base[1100];
		char *path = strrchr(line, ':');
		line[strcspn(line, "\n")] = 0;
		if (!path)
			continue;
		path++;
		if (strstr(line, ":pids:"))
			snprintf(base, sizeof(base), "/sys/fs/cgroup/pids%s", path);
		else if (!strncmp(line, "0::", 3))
			snprintf(base, sizeof(base), "/sys/fs/cgroup%s", path);
		else
			continue;
		base[strcspn(base, "\n")] = 0;
		if (base[strlen(base) - 1] == '/')
			base[strlen(base) - 1] = 0;
		if (cg_try(base)) {
			cg_state = 1;
			break;
		}
	}
	if (f)
		fclose(f);
	return cg_state == 1;
}

const char *spawn_describe_limits(void)
{
	if (cg_usable())
		return "process count limited by a pids cgroup and RLIMIT_NPROC";
	if (geteuid() == 0)
		return "process count NOT limited (root ignores RLIMIT_NPROC and no pids cgroup "
		       "can be made)";
	return "process count limited by RLIMIT_NPROC (shared by every process of this user)";
}

/* A new pids cgroup allowing n tasks, its path in dir; false when none. */
static bool cg_make(int n, char *dir, size_t len)
{
	static atomic_int seq;
	char f[1300], v[32];
	if (n <= 0 || !cg_usable())
		return false;
	snprintf(dir, len, "%s/locklab-%d-%d", cg_base, (int)getpid(), atomic_fetch_add(&seq, 1));
	if (mkdir(dir, 0700) && errno != EEXIST)
		return false;
	snprintf(f, sizeof(f), "%s/pids.max", dir);
	int fd = open(f, O_WRONLY | O_CLOEXEC);
	int l = snprintf(v, sizeof(v), "%d", n);
	bool ok = fd >= 0 && write(fd, v, (size_t)l) == l;
	if (fd >= 0)
		close(fd);
	if (!ok)
		rmdir(dir);
	return ok;
}

/* Kill whatever is left in the cgroup and remove it. */
static void cg_drop(const char *dir)
{
	char f[1300];
	snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	for (int tries = 0; tries < 200; tries++) {
		FILE *p = fopen(f, "r");
		int pid, n = 0;
		while (p && fscanf(p, "%d", &pid) == 1) {
			kill(pid, SIGKILL);
			n++;
		}
		if (p)
			fclose(p);
		if (!n && !rmdir(dir))
			return;
		struct timespec d = {0, 10 * 1000000};
		nanosleep(&d, NULL);
	}
	rmdir(dir);
}

static void set_limit(int what, rlim_t v)
{
	struct rlimit rl = {v, v};
	setrlimit(what, &rl);
}

/* In the child: limits, then exec.  Only async-signal-safe calls. */
static void child_exec(const struct spawn_cmd *c, char *const argv[], char *const envp[],
                       int out_fd, int err_fd, const char *cg)
{
	int in = open("/dev/null", O_RDONLY);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (in < 0 || out_fd < 0 || err_fd < 0)
		_exit(126);
	if (dup2(in, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	/* nothing of the agent's (its sockets, the spool) reaches the child */
	if (syscall(SYS_close_range, 3U, ~0U, 0U))
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	if (cg) {
		char f[1300];
		/* snprintf is not async-signal-safe in theory; the path was made in the parent */
		size_t l = strlen(cg);
		memcpy(f, cg, l);
		memcpy(f + l, "/cgroup.procs", 14);
		int fd = open(f, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			dprintf(2, "spawn: cannot enter the pids cgroup %s\n", cg);
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
	if (c->sandbox)
		set_limit(RLIMIT_CORE, 0);
	if (c->cwd && chdir(c->cwd)) {
		dprintf(2, "spawn: cannot enter %s: %s\n", c->cwd, strerror(errno));
		_exit(126);
	}
	execvpe(argv[0], argv, envp);
	dprintf(2, "spawn: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The child's environment: spawn_env_pass from ours, then cmd->env. */
static char **make_env(const struct spawn_cmd *c)
{
	size_t n = 0, k = 0;
	while (spawn_env_pass[n])
		n++;
	for (size_t i = 0; c->env && c->env[i]; i++)
		n++;
	char **envp = strutil_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; spawn_env_pass[i]; i++) {
		const char *v = getenv(spawn_env_pass[i]);
		if (!v)
			continue;
		size_t l = strlen(spawn_env_pass[i]) + strlen(v) + 2;
		envp[k] = strutil_xmalloc(l);
		snprintf(envp[k++], l, "%s=%s", spawn_env_pass[i], v);
	}
	for (size_t i = 0; c->env && c->env[i]; i++)
		envp[k++] = strutil_xstrdup(c->env[i]);
	envp[k] = NULL;
	return envp;
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Read what the child wrote into res, up to max bytes; false at EOF. */
static bool drain(int fd, struct spawn_result *res, size_t max, int wait_ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	char chunk[8192];
	if (poll(&p, 1, wait_ms) <= 0)
		return true;
	ssize_t r = read(fd, chunk, sizeof(chunk));
	if (r < 0)
		return errno == EINTR || errno == EAGAIN;
	if (r == 0)
		return false;
	size_t take = (size_t)r;
	if (res->out_len + take > max) {
		take = max - res->out_len;
		res->out_truncated = true;
	}
	memcpy(res->out + res->out_len, chunk, take);
	res->out_len += take;
	res->out[res->out_len] = 0;
	return true;
}

int spawn_run(const struct spawn_cmd *c, struct spawn_result *res, char *err, size_t errlen)
{
	char **envp = NULL, **argv = NULL, cg[1200];
	int pipefd[2] = {-1, -1}, out_fd = -1, err_fd = -1, st = 0, rc = -1;
	size_t max = c->capture_max ? c->capture_max : 1 << 20;
	bool have_cg, pipe_open;
	double start = now_s();
	pid_t pid;

	memset(res, 0, sizeof(*res));
	envp = make_env(c);
	if (c->sandbox) {
		argv = sandbox_wrap(c->sandbox, c->argv, (const char *const *)envp, err, errlen);
		if (!argv)
			goto out;
		uid_t su;
		gid_t sg;
		/* what the sandbox may write becomes its user's: it runs as no one else */
		for (int i = 0; sandbox_drops_root(&su, &sg) && i < SANDBOX_MAX_PATHS &&
		                c->sandbox->writable[i];
		     i++)
			if (fs_chown_tree(c->sandbox->writable[i], su, sg)) {
				strutil_errf(err, errlen,
				             "cannot give %s to the sandbox's user: %s",
				             c->sandbox->writable[i], strerror(errno));
				goto out;
			}
	} else {
		size_t n = 0;
		while (c->argv[n])
			n++;
		argv = strutil_xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++)
			argv[i] = strutil_xstrdup(c->argv[i]);
	}
	err_fd = c->out_path ? open(c->out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)
	                     : open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (err_fd < 0) {
		strutil_errf(err, errlen, "cannot open %s: %s",
		             c->out_path ? c->out_path : "/dev/null", strerror(errno));
		goto out;
	}
	if (c->capture) {
		if (pipe2(pipefd, O_CLOEXEC)) {
			strutil_errf(err, errlen, "pipe: %s", strerror(errno));
			goto out;
		}
		res->out = strutil_xmalloc(max + 1);
		res->out[0] = 0;
		out_fd = pipefd[1];
	} else {
		out_fd = err_fd;
	}
	have_cg = cg_make(c->lim.nproc, cg, sizeof(cg));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		strutil_errf(err, errlen, "fork: %s", strerror(errno));
		if (have_cg)
			cg_drop(cg);
		goto out;
	}
	if (pid == 0)
		child_exec(c, argv, envp, out_fd, err_fd, have_cg ? cg : NULL);
	setpgid(pid, pid);
	if (pipefd[1] >= 0) {
		close(pipefd[1]);
		pipefd[1] = -1;
	}
	pipe_open = pipefd[0] >= 0;
	for (;;) {
		if (pipe_open)
			pipe_open = drain(pipefd[0], res, max, 20);
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			strutil_errf(err, errlen, "waitpid: %s", strerror(errno));
			kill(-pid, SIGKILL);
			goto out_cg;
		}
		bool late = c->wall_s > 0 && now_s() - start > c->wall_s;
		if (late || atomic_load(&stop_requested)) {
			if (late) {
				res->timed_out = true;
				if (c->on_deadline)
					c->on_deadline(pid, c->arg);
			}
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		if (!pipe_open) {
			struct timespec d = {0, 20 * 1000000};
			nanosleep(&d, NULL);
		}
	}
	kill(-pid, SIGKILL); /* whatever it left running in its group */
	/* what it wrote before it ended (a leftover in another group may hold the pipe: 5 s) */
	for (int i = 0; pipe_open && i < 50; i++)
		pipe_open = drain(pipefd[0], res, max, 100);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	rc = 0;
out_cg:
	if (have_cg)
		cg_drop(cg);
out:
	res->wall_s = now_s() - start;
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (err_fd >= 0)
		close(err_fd);
	free_strv(argv);
	free_strv(envp);
	return rc;
}

void spawn_result_release(struct spawn_result *res)
{
	free(res->out);
	res->out = NULL;
	res->out_len = 0;
}

/* The parent of pid from /proc/pid/stat, or -1. */
static pid_t proc_ppid(pid_t pid, char *comm, size_t commlen)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) state ppid ...": comm may hold anything, so from the last ')' */
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
	int ppid;
	char state;
	if (!open_paren || !close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	snprintf(comm, commlen, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	return ppid;
}

int spawn_descendants(pid_t root, pid_t *out, int max)
{
	pid_t all[4096], parent[4096];
	char comms[4096][16];
	int nall = 0, n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)) && nall < 4096) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		if (*end || p <= 0)
			continue;
		pid_t pp = proc_ppid((pid_t)p, comms[nall], sizeof(comms[nall]));
		if (pp < 0)
			continue;
		all[nall] = (pid_t)p;
		parent[nall++] = pp;
	}
	if (d)
		closedir(d);
	/* breadth first from root; the sandbox's own bwrap processes are left out */
	pid_t queue[4096];
	int head = 0, tail = 0;
	queue[tail++] = root;
	while (head < tail) {
		pid_t p = queue[head++];
		for (int i = 0; i < nall; i++) {
			if (parent[i] != p || tail >= 4096)
				continue;
			queue[tail++] = all[i];
			if (strcmp(comms[i], "bwrap") && n < max)
				out[n++] = all[i];
		}
	}
	bool root_is_bwrap = false;
	for (int i = 0; i < nall; i++)
		if (all[i] == root && !strcmp(comms[i], "bwrap"))
			root_is_bwrap = true;
	if (!root_is_bwrap && n < max) {
		memmove(out + 1, out, (size_t)n * sizeof(*out));
		out[0] = root;
		n++;
	}
	return n;
}

void spawn_cmdline(pid_t pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	out[n] = 0;
	for (ssize_t i = 0; i < n; i++)
		if (!out[i])
			out[i] = ' ';
}

int spawn_replace(const char *const argv[])
{
	execvp(argv[0], (char *const *)argv);
	return -1;
}
