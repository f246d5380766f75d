/*
 * workload_kernel.c - workloads whose lock is the kernel's: futex-wake and
 * futex-hash (as `perf bench futex wake|hash`), vfs-creat-unlink (the
 * "test-mutex V" of the 2009 adaptive-spinning mutex thread: creat+unlink
 * in one directory serialises on the directory inode's lock) and aim7-mix
 * (processes running a fork/exec/pipe/creat/brk/signal job mix over a users
 * ramp, reported in jobs per minute, as AIM7's high_systime in the 2016
 * mutex rewrite's threads), and three that drive a kernel struct mutex from
 * userspace with many users (pipe-mutex, epoll-ctl, seq-read: each names
 * its lock below).  They record lock "kernel".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "workload.h"
#include "workload_internal.h"

#define SMALL_STACK (128 * 1024)

/*
 * Start n threads of fn; with pin, thread i runs on CPU i % CPUs, as perf
 * bench futex pins its waiters (where a woken waiter runs decides whether it
 * preempts the waker, so the two must agree to measure the same thing).
 * Each thread started bumps *beat (may be NULL), so the runner's watchdog
 * sees progress while thousands of users start on a slow (emulated) CPU.
 * Returns how many started.
 */
static int start_threads_pinned(pthread_t *tids, int n, void *(*fn)(void *), void *args,
                                size_t argsize, bool pin, atomic_ulong *beat, char *err,
                                size_t errlen)
{
	pthread_attr_t attr;
	int cpus = lb_online_cpus();
	pthread_attr_init(&attr);
	/* perf's waiters have default stacks, and glibc's madvise of a default
	 * stack at thread exit sends TLB-flush IPIs to the waker: keep that */
	if (!pin)
		pthread_attr_setstacksize(&attr, SMALL_STACK);
	for (int i = 0; i < n; i++) {
		if (pin) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(i % cpus, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		if (pthread_create(&tids[i], &attr, fn, (char *)args + argsize * (size_t)i)) {
			snprintf(err, errlen, "cannot create thread %d of %d", i + 1, n);
			pthread_attr_destroy(&attr);
			return i;
		}
		if (beat)
			atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	}
	pthread_attr_destroy(&attr);
	return n;
}

static void sleep_ms(int ms)
{
	struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

/* ---- futex-wake ---------------------------------------------------- */

struct fw_ctx {
	_Alignas(LB_CACHELINE) atomic_int word;
	atomic_int ready;
	struct wl_shared *sh;
	pid_t *tids;
};

struct fw_arg {
	struct fw_ctx *c;
	int idx;
};

static void *fw_waiter(void *arg)
{
	struct fw_arg *a = arg;
	a->c->tids[a->idx] = (pid_t)syscall(SYS_gettid);
	atomic_fetch_add(&a->c->ready, 1);
	/* wait until woken (a signal's EINTR waits again), as perf bench futex
	 * wake does: the waker counts the wakeups */
	while (lb_futex_wait(&a->c->word, 0) < 0 && errno == EINTR)
		;
	atomic_store_explicit(&a->c->sh->progress[a->idx].n, 1, memory_order_relaxed);
	return NULL;
}

/* True when every waiter thread sleeps (state S in /proc). */
static bool all_sleeping(const pid_t *tids, int n)
{
	char path[64], buf[256];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tids[i]);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			return false;
		ssize_t len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			return false;
		buf[len] = 0;
		char *rp = strrchr(buf, ')');
		if (!rp || rp[1] != ' ' || rp[2] != 'S')
			return false;
	}
	return true;
}

static int wl_futex_wake(const struct lock_ops *ops, const struct wl_params *p,
                         struct wl_shared *sh, struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1;
	struct fw_ctx c = {.sh = sh};
	pthread_t *threads = calloc((size_t)n, sizeof(*threads));
	struct fw_arg *args = calloc((size_t)n, sizeof(*args));
	double *ms = calloc((size_t)p->repeat, sizeof(double));
	c.tids = calloc((size_t)n, sizeof(pid_t));

	if (!threads || !args || !ms || !c.tids) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		args[i] = (struct fw_arg){&c, i};
	for (int r = 0; r < p->repeat; r++) {
		int started, woken = 0;
		uint64_t deadline = lb_now_ns() + 10ull * 1000000000ull;

		atomic_store(&c.word, 0);
		atomic_store(&c.ready, 0);
		for (int i = 0; i < n; i++)
			atomic_store(&sh->progress[i].n, 0);
		started = start_threads_pinned(threads, n, fw_waiter, args, sizeof(*args), true,
		                               NULL, err, errlen);
		if (started < n) {
			/* release the ones that started, then give up */
			while (woken < started)
				woken += (int)lb_futex_wake(&c.word, started);
			for (int i = 0; i < started; i++)
				pthread_join(threads[i], NULL);
			goto out;
		}
		while (atomic_load(&c.ready) < n || !all_sleeping(c.tids, n)) {
			if (lb_now_ns() > deadline) {
				snprintf(err, errlen, "waiters did not all block within 10 s");
				break;
			}
			usleep(500);
		}
		/* let the machine settle for 100 ms before the wakeups, as perf bench
		 * futex wake does: idle CPUs must be woken too, and that is part of
		 * what a wakeup costs */
		usleep(100000);
		atomic_store(&sh->phase, WL_PHASE_MEASURE);
		uint64_t t0 = lb_now_ns();
		while (woken < n) {
			long w = lb_futex_wake(&c.word, p->wake_batch);
			if (w > 0)
				woken += (int)w;
		}
		uint64_t t1 = lb_now_ns();
		ms[r] = (double)(t1 - t0) / 1e6;
		atomic_fetch_add_explicit(&sh->progress[WL_MAX_THREADS].n, 1, memory_order_relaxed);
		for (int i = 0; i < n; i++)
			pthread_join(threads[i], NULL);
		if (*err)
			goto out;
	}
	wl_add_metric(run, "wake_ms", "ms", false, ms, (size_t)p->repeat, NULL, 0);
	rc = 0;
out:
	free(c.tids);
	free(ms);
	free(args);
	free(threads);
	return rc;
}

/* ---- futex-hash ---------------------------------------------------- */

struct fh_arg {
	_Alignas(LB_CACHELINE) int idx;
	int nfutex;
	atomic_int *stop;
	struct lb_gate *start;
	struct wl_shared *sh;
	unsigned long ops;
	int cpus_allowed; /* CPUs in the thread's affinity mask, as it ran */
};

static void *fh_thread(void *arg)
{
	struct fh_arg *a = arg;
	_Atomic int *words = calloc((size_t)a->nfutex, sizeof(*words));
	cpu_set_t set;
	if (!words)
		abort();
	CPU_ZERO(&set);
	a->cpus_allowed =
	    pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0 ? CPU_COUNT(&set) : -1;
	lb_gate_wait(a->start);
	while (!atomic_load_explicit(a->stop, memory_order_relaxed)) {
		for (int i = 0; i < a->nfutex; i++)
			lb_futex_wait(&words[i],
			              1234); /* value differs: EAGAIN after the hash lookup */
		a->ops += (unsigned long)a->nfutex;
		atomic_store_explicit(&a->sh->progress[a->idx].n, a->ops, memory_order_relaxed);
	}
	free(words);
	return NULL;
}

/* ---- vfs-creat-unlink -------------------------------------------- */

struct vfs_arg {
	_Alignas(LB_CACHELINE) int idx;
	const char *dir;
	atomic_int *stop;
	struct lb_gate *start;
	struct wl_shared *sh;
	unsigned long ops;
	int error;
};

static void *vfs_thread(void *arg)
{
	struct vfs_arg *a = arg;
	char path[4096];
	lb_gate_wait(a->start);
	while (!atomic_load_explicit(a->stop, memory_order_relaxed)) {
		snprintf(path, sizeof(path), "%s/t%d-%lu", a->dir, a->idx, a->ops);
		int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		if (fd < 0 || close(fd) || unlink(path)) {
			a->error = errno;
			break;
		}
		a->ops++;
		atomic_store_explicit(&a->sh->progress[a->idx].n, a->ops, memory_order_relaxed);
	}
	return NULL;
}

/*
 * Run n threads of fn for the duration, repeat times; fills ops/s samples.
 * With pin, thread i runs on CPU i % CPUs (start_threads_pinned).
 */
static int timed_threads(const struct wl_params *p, struct wl_shared *sh, void *(*fn)(void *),
                         void *args, size_t argsize, atomic_int *stop, struct lb_gate *start,
                         unsigned long *(*ops_of)(void *), bool pin, double *ops_s,
                         double *per_thread, char *err, size_t errlen)
{
	int n = p->threads;
	pthread_t *threads = calloc((size_t)n, sizeof(*threads));
	if (!threads) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int r = 0; r < p->repeat; r++) {
		unsigned long total = 0;
		atomic_store(stop, 0);
		lb_gate_init(start);
		for (int i = 0; i < n; i++)
			*ops_of((char *)args + argsize * (size_t)i) = 0;
		int started = start_threads_pinned(threads, n, fn, args, argsize, pin,
		                                   &sh->progress[WL_MAX_THREADS].n, err, errlen);
		if (started < n)
			atomic_store(stop, 1);
		atomic_store(&sh->phase, WL_PHASE_MEASURE);
		lb_gate_open(start);
		uint64_t t0 = lb_now_ns();
		if (started == n)
			sleep_ms(p->duration_ms);
		atomic_store_explicit(stop, 1, memory_order_relaxed);
		uint64_t t1 = lb_now_ns();
		/* 2000 threads end slowly on an emulated CPU: each join is progress */
		for (int i = 0; i < started; i++) {
			pthread_join(threads[i], NULL);
			atomic_fetch_add_explicit(&sh->progress[WL_MAX_THREADS].n, 1,
			                          memory_order_relaxed);
		}
		lb_gate_destroy(start);
		if (started < n) {
			free(threads);
			return -1;
		}
		double secs = (double)(t1 - t0) / 1e9;
		for (int i = 0; i < n; i++) {
			unsigned long o = *ops_of((char *)args + argsize * (size_t)i);
			total += o;
			per_thread[i] += o / secs / p->repeat;
		}
		ops_s[r] = total / secs;
	}
	free(threads);
	return 0;
}

static unsigned long *fh_ops(void *a)
{
	return &((struct fh_arg *)a)->ops;
}

static unsigned long *vfs_ops(void *a)
{
	return &((struct vfs_arg *)a)->ops;
}

/*
 * Run p->threads threads of fn over args (argsize each) with timed_threads
 * and record their ops/s as ops_per_sec on run, unless failed (may be NULL)
 * finds a thread's error first (a reason in err).  Returns 0 or -1.
 */
static int timed_ops_metric(const struct wl_params *p, struct wl_shared *sh, void *(*fn)(void *),
                            void *args, size_t argsize, atomic_int *stop, struct lb_gate *start,
                            unsigned long *(*ops_of)(void *), bool pin,
                            int (*failed)(void *args, int n, char *err, size_t errlen),
                            struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1;
	double *ops_s = calloc((size_t)p->repeat, sizeof(double));
	double *per_thread = calloc((size_t)n, sizeof(double));

	if (!ops_s || !per_thread) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (timed_threads(p, sh, fn, args, argsize, stop, start, ops_of, pin, ops_s, per_thread,
	                  err, errlen) ||
	    (failed && failed(args, n, err, errlen)))
		goto out;
	wl_add_metric(run, "ops_per_sec", "ops/s", true, ops_s, (size_t)p->repeat, per_thread,
	              (size_t)n);
	rc = 0;
out:
	free(per_thread);
	free(ops_s);
	return rc;
}

static int wl_futex_hash(const struct lock_ops *ops, const struct wl_params *p,
                         struct wl_shared *sh, struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1;
	atomic_int stop = 0;
	struct lb_gate start;
	struct fh_arg *args = aligned_alloc(LB_CACHELINE, sizeof(*args) * (size_t)n);

	if (!args) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		args[i] = (struct fh_arg){
		    .idx = i, .nfutex = p->futexes, .stop = &stop, .start = &start, .sh = sh};
	/* perf bench futex hash pins thread i to CPU i % CPUs: so does this */
	rc = timed_ops_metric(p, sh, fh_thread, args, sizeof(*args), &stop, &start, fh_ops, true,
	                      NULL, run, err, errlen);
	if (!rc) {
		/* what the threads saw: 1 when every one was bound to a single CPU */
		bool pinned = true;
		for (int i = 0; i < n; i++)
			pinned = pinned && args[i].cpus_allowed == 1;
		run_set_param_num(run, "pinned", pinned);
	}
out:
	free(args);
	return rc;
}

static const char *default_dir(const struct wl_params *p)
{
	struct stat st;
	if (p->dir && *p->dir)
		return p->dir;
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode) && !access("/dev/shm", W_OK))
		return "/dev/shm"; /* tmpfs, as test-mutex used */
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

static int make_workdir(const struct wl_params *p, char *out, size_t outlen, char *err,
                        size_t errlen)
{
	snprintf(out, outlen, "%s/lockbench.XXXXXX", default_dir(p));
	if (!mkdtemp(out)) {
		snprintf(err, errlen, "cannot create a directory in %s: %s", default_dir(p),
		         strerror(errno));
		return -1;
	}
	return 0;
}

static void remove_workdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	if (d) {
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

static int vfs_failed(void *args, int n, char *err, size_t errlen)
{
	struct vfs_arg *a = args;
	for (int i = 0; i < n; i++) {
		if (a[i].error) {
			snprintf(err, errlen, "creat/unlink in %s: %s", a[i].dir,
			         strerror(a[i].error));
			return -1;
		}
	}
	return 0;
}

static int wl_vfs(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                  struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1;
	atomic_int stop = 0;
	struct lb_gate start;
	char dir[4096] = "";
	struct vfs_arg *args = aligned_alloc(LB_CACHELINE, sizeof(*args) * (size_t)n);

	if (!args) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (make_workdir(p, dir, sizeof(dir), err, errlen)) {
		dir[0] = 0;
		goto out;
	}
	for (int i = 0; i < n; i++)
		args[i] = (struct vfs_arg){
		    .idx = i, .dir = dir, .stop = &stop, .start = &start, .sh = sh};
	rc = timed_ops_metric(p, sh, vfs_thread, args, sizeof(*args), &stop, &start, vfs_ops, false,
	                      vfs_failed, run, err, errlen);
out:
	if (dir[0])
		remove_workdir(dir);
	free(args);
	return rc;
}

/* ---- kernel struct mutex from userspace --------------------------- */

/*
 * pipe-mutex: every user writes one byte into one shared pipe and reads one
 * back.  pipe_write and pipe_read both take the pipe's struct mutex:
 * fs/pipe.c (6.1) __pipe_lock() -> mutex_lock_nested(&pipe->mutex,
 * I_MUTEX_PARENT) at line 103, called by pipe_read (line 244) and
 * pipe_write (line 443).  A user blocks in read only when the pipe is
 * empty, and it is not while the user's own byte is in flight (every
 * reader wrote first), so no user waits for ever.
 *
 * epoll-ctl: every user adds its own eventfd to one shared epoll set and
 * removes it again.  do_epoll_ctl() takes the set's struct mutex:
 * fs/eventpoll.c (6.1) epoll_mutex_lock(&ep->mtx, 0, nonblock) at line
 * 2183 -> mutex_lock_nested (line 2103).
 *
 * seq-read: every user preads /proc/loadavg through one shared file
 * descriptor.  seq_read_iter() takes the seq_file's struct mutex:
 * fs/seq_file.c (6.1) mutex_lock(&m->lock) at line 182 (loadavg is a
 * proc_create_single seq_file, fs/proc/loadavg.c line 33).
 */
enum km_kind { KM_PIPE, KM_EPOLL, KM_SEQ };
static const char *const km_what[] = {"pipe I/O", "epoll_ctl", "pread of /proc/loadavg"};

struct km_arg {
	_Alignas(LB_CACHELINE) int idx;
	enum km_kind kind;
	int fd, fd2; /* pipe: read, write end; epoll: the set; seq: the file */
	int own;     /* epoll: this user's eventfd */
	atomic_int *stop;
	struct lb_gate *start;
	struct wl_shared *sh;
	unsigned long ops;
	int error;
};

static int km_step(struct km_arg *a)
{
	char buf[256];
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = a->own};

	switch (a->kind) {
	case KM_PIPE:
		if (write(a->fd2, "x", 1) != 1 || read(a->fd, buf, 1) != 1)
			return -1;
		return 0;
	case KM_EPOLL:
		if (epoll_ctl(a->fd, EPOLL_CTL_ADD, a->own, &ev) ||
		    epoll_ctl(a->fd, EPOLL_CTL_DEL, a->own, NULL))
			return -1;
		return 0;
	case KM_SEQ:
		return pread(a->fd, buf, sizeof(buf), 0) > 0 ? 0 : -1;
	}
	return -1;
}

static void *km_thread(void *arg)
{
	struct km_arg *a = arg;
	lb_gate_wait(a->start);
	while (!atomic_load_explicit(a->stop, memory_order_relaxed)) {
		if (km_step(a)) {
			if (errno == EINTR)
				continue;
			a->error = errno;
			break;
		}
		a->ops++;
		atomic_store_explicit(&a->sh->progress[a->idx].n, a->ops, memory_order_relaxed);
	}
	return NULL;
}

static unsigned long *km_ops(void *a)
{
	return &((struct km_arg *)a)->ops;
}

static int km_failed(void *args, int n, char *err, size_t errlen)
{
	struct km_arg *a = args;
	for (int i = 0; i < n; i++) {
		if (a[i].error) {
			snprintf(err, errlen, "%s: %s", km_what[a[i].kind], strerror(a[i].error));
			return -1;
		}
	}
	return 0;
}

/*
 * epoll-ctl holds an eventfd per user: 2000 users pass the usual soft
 * limit of 1024 open files, so raise it towards the hard limit.
 */
static int raise_nofile(int want, char *err, size_t errlen)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur >= (rlim_t)want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)want) {
		snprintf(err, errlen,
		         "epoll_ctl: %d users need %d open files, the hard limit is %llu",
		         want - 64, want, (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = (rlim_t)want;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		snprintf(err, errlen, "epoll_ctl: raising the open files limit to %d: %s", want,
		         strerror(errno));
		return -1;
	}
	return 0;
}

static int wl_kmutex(enum km_kind kind, const struct wl_params *p, struct wl_shared *sh,
                     struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1, fds[2] = {-1, -1};
	atomic_int stop = 0;
	struct lb_gate start;
	struct km_arg *args = aligned_alloc(LB_CACHELINE, sizeof(*args) * (size_t)n);

	if (!args) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		args[i] = (struct km_arg){
		    .idx = i, .kind = kind, .own = -1, .stop = &stop, .start = &start, .sh = sh};
	int made = kind == KM_PIPE    ? pipe2(fds, O_CLOEXEC)
	           : kind == KM_EPOLL ? (fds[0] = epoll_create1(EPOLL_CLOEXEC))
	                              : (fds[0] = open("/proc/loadavg", O_RDONLY | O_CLOEXEC));
	if (made < 0) {
		snprintf(err, errlen, "%s: cannot set up: %s", km_what[kind], strerror(errno));
		goto out;
	}
	if (kind == KM_EPOLL && raise_nofile(n + 64, err, errlen))
		goto out;
	for (int i = 0; i < n; i++) {
		args[i].fd = fds[0];
		args[i].fd2 = fds[1];
		if (kind == KM_EPOLL && (args[i].own = eventfd(0, EFD_CLOEXEC)) < 0) {
			snprintf(err, errlen, "eventfd for user %d: %s", i + 1, strerror(errno));
			goto out;
		}
	}
	rc = timed_ops_metric(p, sh, km_thread, args, sizeof(*args), &stop, &start, km_ops, false,
	                      km_failed, run, err, errlen);
out:
	for (int i = 0; args && i < n; i++)
		if (args[i].own >= 0)
			close(args[i].own);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	free(args);
	return rc;
}

static int wl_pipe_mutex(const struct lock_ops *ops, const struct wl_params *p,
                         struct wl_shared *sh, struct lb_run *run, char *err, size_t errlen)
{
	return wl_kmutex(KM_PIPE, p, sh, run, err, errlen);
}

static int wl_epoll_ctl(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                        struct lb_run *run, char *err, size_t errlen)
{
	return wl_kmutex(KM_EPOLL, p, sh, run, err, errlen);
}

static int wl_seq_read(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                       struct lb_run *run, char *err, size_t errlen)
{
	return wl_kmutex(KM_SEQ, p, sh, run, err, errlen);
}

/* ---- aim7-mix ------------------------------------------------------ */

/*
 * aim7-mix: AIM7 high_systime's job mix (fork + exec + wait, a pipe round
 * trip, creat + write + unlink in one shared directory, brk up and down, a
 * signal to self) run by every user in a loop, reported in jobs per minute.
 *
 * The kernel locks it drives (6.1): the shared directory's inode i_rwsem
 * (every user's creat and unlink), tasklist_lock and the pid allocator
 * (every fork and exit), each user's mmap_lock (fork, exec, brk) and
 * anon_vma (the job's fork: shared by the user and its one child), each
 * pipe's pipe->mutex (one pipe per job: not contended) and sighand->siglock.
 *
 * How it differs from AIM7: AIM7 forks its users from one driver, so they
 * all share the driver's anon_vma root rwsem, and every fork, exit and
 * brk of every user takes it.  Under TCG its waiters block for more than
 * 30 s at 1000 users: the run measured that one rwsem and not the mix.
 * Here each user is this program again (`lockbench aim7-user`, started by
 * posix_spawn, which shares no memory with the coordinator and copies no
 * anon_vma), with its own address space: the shared anon_vma root is gone,
 * and the users meet on the directory, the task list and the allocator.
 * The users and the coordinator share only a small board (a memfd the
 * users inherit): the start and stop word and each user's counters.
 */

/* What every user writes: its jobs and its job steps (for the watchdog). */
struct aim7_slot {
	_Alignas(LB_CACHELINE) atomic_ulong jobs;
	atomic_ulong steps;
};

enum aim7_state { AIM7_WAIT, AIM7_GO, AIM7_STOP };

struct aim7_board {
	_Alignas(LB_CACHELINE) atomic_int state; /* enum aim7_state */
	struct aim7_slot slot[];
};

static size_t aim7_board_size(int users)
{
	return sizeof(struct aim7_board) + sizeof(struct aim7_slot) * (size_t)users;
}

/*
 * What a job execs: /bin/true where there is one, else this program again
 * (the guest's initramfs holds only /init and /lockbench), which main()
 * answers at once for LB_AIM7_EXEC_ARG.
 */
struct aim7_exec {
	const char *path;
	char *const *argv;
};

static volatile sig_atomic_t aim7_signals;

static void aim7_on_signal(int sig)
{
	aim7_signals++;
}

/*
 * One AIM7-style job: the system-call mix high_systime stresses.  Each of
 * its steps bumps *beat: with 2000 users sharing two CPUs fairly, a whole
 * job takes every user about as long, and the watchdog must see the steps.
 * Returns NULL, or the step that failed (errno says why, except "exec").
 */
static const char *aim7_job(const char *dir, const struct aim7_exec *ex, int user,
                            unsigned long job, atomic_ulong *beat)
{
	char path[4200], buf[4096];
	int fds[2];

	/* fork + exec + wait */
	pid_t pid = fork();
	if (pid < 0)
		return "fork";
	if (pid == 0) {
		execv(ex->path, ex->argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return "waitpid";
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		errno = 0;
		return "exec";
	}
	atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	/* pipe round trip */
	if (pipe(fds))
		return "pipe";
	memset(buf, (int)(job & 0xff), 512);
	bool piped = write(fds[1], buf, 512) == 512 && read(fds[0], buf, 512) == 512;
	close(fds[0]);
	close(fds[1]);
	if (!piped)
		return "pipe write/read";
	atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	/* creat, write, unlink in the shared directory */
	snprintf(path, sizeof(path), "%s/u%d-%lu", dir, user, job);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0)
		return "creat";
	ssize_t w = write(fd, buf, sizeof(buf));
	close(fd);
	if (w != (ssize_t)sizeof(buf))
		return "write";
	if (unlink(path))
		return "unlink";
	atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	/* brk up and down */
	void *cur = sbrk(0);
	if (sbrk(64 * 1024) == (void *)-1)
		return "brk";
	((volatile char *)cur)[0] = 1;
	if (sbrk(-64 * 1024) == (void *)-1)
		return "brk";
	/* a signal to self */
	raise(SIGUSR1);
	return NULL;
}

/*
 * `lockbench aim7-user DIR USER USERS FD`: one user, in its own address
 * space.  Maps the board from FD, waits for the start, then runs jobs
 * until the stop (or until killed), counting them in its slot.  Exits 0,
 * 1 on a failed job, 2 when it cannot start (bad arguments, no board).
 */
int wl_aim7_user_main(int argc, char **argv)
{
	static char *const true_argv[] = {"true", NULL};
	static char *const self_argv[] = {"lockbench", LB_AIM7_EXEC_ARG, NULL};
	struct aim7_exec ex = {"/bin/true", true_argv};
	long long user, users, fd;
	char err[128];

	if (argc != 4 || lb_parse_int(argv[1], 0, WL_MAX_THREADS - 1, &user, "user", err, 128) ||
	    lb_parse_int(argv[2], user + 1, WL_MAX_THREADS, &users, "users", err, 128) ||
	    lb_parse_int(argv[3], 0, INT_MAX, &fd, "fd", err, 128))
		return 2;
	struct aim7_board *b =
	    mmap(NULL, aim7_board_size((int)users), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	close((int)fd);
	if (b == MAP_FAILED) {
		fprintf(stderr, "lockbench aim7-user %lld: board: %s\n", user, strerror(errno));
		return 2;
	}
	if (access(ex.path, X_OK))
		ex = (struct aim7_exec){"/proc/self/exe", self_argv};
	struct sigaction sa = {.sa_handler = aim7_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	struct aim7_slot *me = &b->slot[user];
	unsigned long jobs = 0;
	while (atomic_load_explicit(&b->state, memory_order_acquire) == AIM7_WAIT)
		lb_futex_wait_shared(&b->state, AIM7_WAIT);
	while (atomic_load_explicit(&b->state, memory_order_relaxed) == AIM7_GO) {
		const char *failed = aim7_job(argv[0], &ex, (int)user, jobs, &me->steps);
		if (failed) {
			fprintf(stderr, "lockbench aim7-user %lld: job %lu: %s failed: %s\n", user,
			        jobs + 1, failed, errno ? strerror(errno) : "exit status not 0");
			return 1;
		}
		jobs++;
		atomic_store_explicit(&me->jobs, jobs, memory_order_relaxed);
		atomic_fetch_add_explicit(&me->steps, 1, memory_order_relaxed);
	}
	return 0;
}

/*
 * The runner's watchdog reads sh->progress: copy each user's steps there
 * (the users cannot reach sh: they exec'd).  Returns the jobs done so far.
 */
static unsigned long aim7_mirror(struct aim7_board *b, struct wl_shared *sh, int n)
{
	unsigned long total = 0;
	for (int i = 0; i < n; i++) {
		total += atomic_load_explicit(&b->slot[i].jobs, memory_order_relaxed);
		atomic_store_explicit(&sh->progress[i].n,
		                      atomic_load_explicit(&b->slot[i].steps, memory_order_relaxed),
		                      memory_order_relaxed);
	}
	return total;
}

/*
 * Start user i: `lockbench aim7-user DIR I N FD` by posix_spawn (no copy
 * of this process's memory).  Returns its pid, or -1 with errno.
 */
static pid_t aim7_spawn(const char *dir, int i, int n, int fd)
{
	char si[16], sn[16], sfd[16];
	char *argv[] = {"lockbench", LB_AIM7_USER_ARG, (char *)dir, si, sn, sfd, NULL};
	pid_t pid;
	snprintf(si, sizeof(si), "%d", i);
	snprintf(sn, sizeof(sn), "%d", n);
	snprintf(sfd, sizeof(sfd), "%d", fd);
	int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
	if (e) {
		errno = e;
		return -1;
	}
	return pid;
}

/*
 * End a repetition: kill the users that still run (a job in flight is not
 * counted: the figures were read at the stop), reap them and every orphan
 * of theirs (this process is their subreaper), and count the users that
 * ended on a failed job or could not start.  Each user reaped is progress
 * for the watchdog.  A user stuck in the kernel is not killable: the
 * waitpid blocks, no progress moves and the runner's watchdog reports it.
 */
static int aim7_end(const pid_t *pids, int started, atomic_ulong *beat)
{
	int failed = 0;
	for (int i = 0; i < started; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < started; i++) {
		int st = 0;
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st) && WEXITSTATUS(st))
			failed++;
		atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	}
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	return failed;
}

/* True when a user (or an orphan of one) has ended: a failed job. */
static bool aim7_user_ended(void)
{
	siginfo_t si = {0};
	return !waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid;
}

/*
 * The users run for the duration, and past it until they have done as
 * many jobs as there are users: 2000 users sharing two emulated CPUs
 * fairly finish their first jobs together, seconds after the start, and
 * a window shorter than that would measure nothing.  JPM is the jobs done
 * in the window over its length.
 */
static int wl_aim7(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                   struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1, fd = -1;
	char dir[4096] = "";
	size_t board_len = aim7_board_size(n);
	struct aim7_board *b = MAP_FAILED;
	pid_t *pids = calloc((size_t)n, sizeof(pid_t));
	double *jpm = calloc((size_t)p->repeat, sizeof(double));
	double *per_user = calloc((size_t)n, sizeof(double));
	atomic_ulong *beat = &sh->progress[WL_MAX_THREADS].n;

	if (!pids || !jpm || !per_user) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (make_workdir(p, dir, sizeof(dir), err, errlen)) {
		dir[0] = 0;
		goto out;
	}
	/* not close-on-exec: the users inherit it */
	fd = memfd_create("lockbench-aim7", 0);
	if (fd < 0 || ftruncate(fd, (off_t)board_len) ||
	    (b = mmap(NULL, board_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		snprintf(err, errlen, "aim7 board: %s", strerror(errno));
		goto out;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	for (int r = 0; r < p->repeat; r++) {
		int started = 0, failed;
		atomic_store(&sh->phase, WL_PHASE_SETUP);
		atomic_store(&b->state, AIM7_WAIT);
		for (int i = 0; i < n; i++) {
			atomic_store(&b->slot[i].jobs, 0);
			atomic_store(&b->slot[i].steps, 0);
		}
		aim7_mirror(b, sh, n);
		/* start every user first: on an emulated CPU 2000 starts take seconds */
		for (int i = 0; i < n; i++) {
			pid_t pid = aim7_spawn(dir, i, n, fd);
			if (pid < 0) {
				snprintf(err, errlen, "start user %d of %d: %s", i + 1, n,
				         strerror(errno));
				break;
			}
			pids[started++] = pid;
			atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
		}
		/* release pairs with the users' acquire load of the state */
		atomic_store_explicit(&sh->phase, WL_PHASE_MEASURE, memory_order_release);
		atomic_store_explicit(&b->state, AIM7_GO, memory_order_release);
		lb_futex_wake_shared(&b->state, INT_MAX);
		uint64_t t0 = lb_now_ns(), until = t0 + (uint64_t)p->duration_ms * 1000000;
		while (started == n && !aim7_user_ended() &&
		       (aim7_mirror(b, sh, n) < (unsigned long)n || lb_now_ns() < until))
			sleep_ms(20);
		atomic_store(&b->state, AIM7_STOP);
		uint64_t t1 = lb_now_ns();
		double mins = (double)(t1 - t0) / 60e9;
		unsigned long total = 0;
		for (int i = 0; i < started; i++) {
			unsigned long j = atomic_load(&b->slot[i].jobs);
			total += j;
			per_user[i] += j / mins / p->repeat;
		}
		atomic_store(&sh->phase, WL_PHASE_STOPPING);
		failed = aim7_end(pids, started, beat);
		if (started < n)
			goto out;
		if (failed) {
			snprintf(err, errlen,
			         "%d of %d aim7 users failed a job in %s (or could not start)",
			         failed, n, dir);
			goto out;
		}
		jpm[r] = total / mins;
	}
	wl_add_metric(run, "jpm", "JPM", true, jpm, (size_t)p->repeat, per_user, (size_t)n);
	rc = 0;
out:
	if (dir[0])
		remove_workdir(dir);
	if (b != MAP_FAILED)
		munmap(b, board_len);
	if (fd >= 0)
		close(fd);
	free(per_user);
	free(jpm);
	free(pids);
	return rc;
}

const struct workload wl_futex_wake_def = {
    "futex-wake", "N waiters on one futex, woken --wake-batch at a time: ms to wake all", false,
    false, wl_futex_wake};
const struct workload wl_futex_hash_def = {
    "futex-hash", "private FUTEX_WAIT on --futexes words per thread (value mismatch): ops/s", false,
    false, wl_futex_hash};
const struct workload wl_vfs_def = {"vfs-creat-unlink",
                                    "N threads creat+unlink in one (tmpfs) directory: ops/s", false,
                                    false, wl_vfs};
const struct workload wl_aim7_def = {
    "aim7-mix", "users processes running a fork/exec/pipe/creat/brk/signal job mix: JPM", false,
    false, wl_aim7};
const struct workload wl_pipe_mutex_def = {
    "pipe-mutex", "users write and read one byte through one shared pipe (pipe->mutex): ops/s",
    false, false, wl_pipe_mutex};
const struct workload wl_epoll_ctl_def = {
    "epoll-ctl", "users add and remove their eventfd in one epoll set (ep->mtx): ops/s", false,
    false, wl_epoll_ctl};
const struct workload wl_seq_read_def = {
    "seq-read", "users pread /proc/loadavg through one shared fd (seq_file m->lock): ops/s", false,
    false, wl_seq_read};
