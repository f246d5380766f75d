/*
 * workload_kernel.c - workloads whose lock is the kernel's: futex-wake and
 * futex-hash (as `perf bench futex wake|hash`), vfs-creat-unlink (creat and
 * unlink in one directory serialise on the directory inode's lock, the
 * "test-mutex V" of the mutex rewrite's measurements), and three that drive
 * a kernel struct mutex from userspace with many users (pipe-mutex,
 * epoll-ctl, seq-read: each names its lock below).  aim7-mix is
 * workload_aim7.c.  They record lock "kernel".
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
			wl_sleep_ms(p->duration_ms);
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
	if (wl_make_workdir(p, dir, sizeof(dir), err, errlen)) {
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
		wl_remove_workdir(dir);
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

const struct workload wl_futex_wake_def = {
    "futex-wake", "N waiters on one futex, woken --wake-batch at a time: ms to wake all", false,
    false, wl_futex_wake};
const struct workload wl_futex_hash_def = {
    "futex-hash", "private FUTEX_WAIT on --futexes words per thread (value mismatch): ops/s", false,
    false, wl_futex_hash};
const struct workload wl_vfs_def = {"vfs-creat-unlink",
                                    "N threads creat+unlink in one (tmpfs) directory: ops/s", false,
                                    false, wl_vfs};
const struct workload wl_pipe_mutex_def = {
    "pipe-mutex", "users write and read one byte through one shared pipe (pipe->mutex): ops/s",
    false, false, wl_pipe_mutex};
const struct workload wl_epoll_ctl_def = {
    "epoll-ctl", "users add and remove their eventfd in one epoll set (ep->mtx): ops/s", false,
    false, wl_epoll_ctl};
const struct workload wl_seq_read_def = {
    "seq-read", "users pread /proc/loadavg through one shared fd (seq_file m->lock): ops/s", false,
    false, wl_seq_read};
