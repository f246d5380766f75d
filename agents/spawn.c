/* spawn.c - see spawn.h. */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "childenv.h"
#include "fsutil.h"
#include "procrun.h"
#include "sandbox.h"
#include "strutil.h"

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

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int spawn_run(const struct spawn_cmd *c, struct spawn_result *res, char *err, size_t errlen)
{
	char **envp = NULL, **argv = NULL, cg[1200];
	int err_fd = -1, rc = -1;
	bool have_cg;
	double start = now_s();
	struct procrun_result pr = {0};

	memset(res, 0, sizeof(*res));
	envp = childenv_make(c->env);
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
	have_cg = cg_make(c->lim.nproc, cg, sizeof(cg));
	{
		struct procrun_cmd pc = {
		    .argv = (const char *const *)argv,
		    .envp = (const char *const *)envp,
		    .cwd = c->cwd,
		    .out_fd = c->capture ? PROCRUN_CAPTURE : err_fd,
		    .err_fd = err_fd,
		    .capture_max = c->capture_max,
		    .wall_s = c->wall_s,
		    .own_group = true,
		    .linger_ms = 5000,
		    .cgroup = have_cg ? cg : NULL,
		    .lim = {.cpu_s = c->lim.cpu_s,
		            .mem_mb = c->lim.mem_mb,
		            .nproc = c->lim.nproc,
		            .fsize_mb = c->lim.fsize_mb,
		            .no_core = c->sandbox != NULL},
		    .stop = &stop_requested,
		    .on_deadline = c->on_deadline,
		    .arg = c->arg,
		};
		rc = procrun(&pc, &pr, err, errlen);
	}
	if (have_cg)
		cg_drop(cg);
	res->status = pr.status;
	res->timed_out = pr.timed_out;
	if (c->capture) {
		/* the caller's buffer even when the run failed, as before */
		res->out = pr.out ? pr.out : strutil_xstrdup("");
		res->out_len = pr.out_len;
		res->out_truncated = pr.out_truncated;
		pr.out = NULL;
	}
	procrun_result_release(&pr);
out:
	res->wall_s = now_s() - start;
	if (err_fd >= 0)
		close(err_fd);
	free_strv(argv);
	childenv_free(envp);
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
	return procrun_replace(argv);
}
