/*
 * workload_lock.c - the workloads that drive a contended lock: hot,
 * cs-sweep, many-locks, oversub, long-hold, and the hidden torture that
 * `lockbench validate` runs (uncontended and wake-latency have files of
 * their own).
 *
 * Every acquisition is checked, not only timed: a plain counter incremented
 * inside the critical section must equal the acquisitions counted outside it
 * (a lock that lets two threads in loses increments).  The torture adds an
 * atomic owner check, trylock on a held lock, and random short and long holds.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "disturb.h"
#include "lockstep.h"
#include "stats.h"
#include "util.h"
#include "workload.h"
#include "workload_internal.h"

enum mode { MODE_HOT, MODE_MANY, MODE_LONG_HOLD, MODE_TORTURE };

#define MAX_WAITS_PER_THREAD 200000

struct lthread {
	_Alignas(LB_CACHELINE) pthread_t tid;
	int idx;
	struct lctx *ctx;
	unsigned long ops;
	unsigned long violations;
	uint64_t rng;
	double *waits; /* long-hold: µs from request to acquisition */
	size_t nwaits;
	size_t rep_from; /* long-hold: the first of waits in the current repetition */
};

struct guarded {
	_Alignas(LB_CACHELINE) unsigned long counter; /* touched only under the lock */
	atomic_int owner;                             /* torture: who is inside, 0 for none */
};

struct lctx {
	const struct lock_ops *ops;
	const struct wl_params *p;
	struct wl_shared *sh;
	enum mode mode;
	int nlocks;
	void **locks;
	struct guarded *guard;
	struct lb_gate start;
	_Alignas(LB_CACHELINE) atomic_int stop;
	/* lockstep (hot_stepped): odd lets the workers run, even parks them, -2 ends */
	_Alignas(LB_CACHELINE) _Atomic int run;
	_Alignas(LB_CACHELINE) _Atomic int parked; /* workers parked since the last stop */
	bool stepped; /* hot in lockstep: hot_stepped measures, not run_rep */
	int nthreads;
	int cpus[CPU_SETSIZE]; /* lockstep: the CPUs this process may use, worker i on i % ncpus */
	int ncpus;
};

static inline uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void critical_section(struct lthread *t, int which)
{
	struct lctx *c = t->ctx;
	struct guarded *g = &c->guard[which];

	if (c->mode == MODE_TORTURE) {
		int was = atomic_exchange_explicit(&g->owner, t->idx + 1, memory_order_relaxed);
		if (was != 0)
			t->violations++;
		/* a held lock must refuse trylock, even from its holder */
		if (c->ops->trylock(c->locks[which])) {
			t->violations++;
			c->ops->unlock(c->locks[which]);
		}
		uint64_t r = xorshift(&t->rng);
		if ((r & 255) == 0)
			usleep(50 + (r >> 8) % 200); /* a long hold that sleeps */
		else
			lb_work((r >> 8) % 200);
		g->counter++;
		if (atomic_exchange_explicit(&g->owner, 0, memory_order_relaxed) != t->idx + 1)
			t->violations++;
		return;
	}
	g->counter++;
	if (c->mode == MODE_LONG_HOLD)
		lb_spin_ns((uint64_t)c->p->hold_us * 1000);
	else
		lb_work(c->p->cs_loops);
}

/*
 * Lockstep: a worker parks only here, at the top of its loop, so that none
 * is parked holding the lock (one blocked in lock() finishes its op first).
 * It says so once per stop; the coordinator waits until all have.  Returns
 * false when the run ends.
 */
static bool lock_thread_park(struct lctx *c, int *seen)
{
	for (;;) {
		int r = atomic_load_explicit(&c->run, memory_order_acquire);
		if (r & 1)
			return true;
		if (r < 0)
			return false;
		if (*seen != r) {
			*seen = r;
			if (atomic_fetch_add(&c->parked, 1) + 1 == c->nthreads)
				lb_futex_wake(&c->parked, 1);
		}
		lb_futex_wait(&c->run, r);
	}
}

static void *lock_thread(void *arg)
{
	struct lthread *t = arg;
	struct lctx *c = t->ctx;
	atomic_ulong *progress = &c->sh->progress[t->idx].n;
	int seen = -1;

	if (c->ncpus > 0)
		wl_pin_self(c->cpus[t->idx % c->ncpus]);
	lb_gate_wait(&c->start);
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		int which = 0;
		uint64_t t0 = 0;

		if (c->stepped && !lock_thread_park(c, &seen))
			break;

		if (c->nlocks > 1)
			which = (int)(xorshift(&t->rng) % (uint64_t)c->nlocks);
		if (c->mode == MODE_TORTURE && (xorshift(&t->rng) & 7) == 0) {
			if (!c->ops->trylock(c->locks[which])) {
				lb_work(20);
				continue;
			}
		} else {
			if (c->mode == MODE_LONG_HOLD)
				t0 = lb_now_ns();
			c->ops->lock(c->locks[which]);
			if (c->mode == MODE_LONG_HOLD && t->nwaits < MAX_WAITS_PER_THREAD)
				t->waits[t->nwaits++] = (double)(lb_now_ns() - t0) / 1e3;
		}
		critical_section(t, which);
		c->ops->unlock(c->locks[which]);
		t->ops++;
		/* read only by the watchdog; no ordering needed */
		atomic_store_explicit(progress, t->ops, memory_order_relaxed);
		lb_work(c->p->outside_loops);
	}
	return NULL;
}

#define REP_MAX_SLICES 4096

struct rep {
	double slices[REP_MAX_SLICES]; /* ops/s in 10 ms slices */
	size_t nslices;
	double elapsed_s;
	double cpu_s;
	unsigned long total;
	unsigned long violations;
};

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static unsigned long progress_sum(struct lctx *c, int n)
{
	unsigned long s = 0;
	for (int i = 0; i < n; i++)
		s += atomic_load_explicit(&c->sh->progress[i].n, memory_order_relaxed);
	return s;
}

/*
 * Lockstep: until every worker has parked since the last stop, at most
 * LOCKSTEP_PARK_MS (a lockstep side never waits unbounded): 0, or -1 with
 * err set.  A worker that hangs in the lock is still a lockup: it stops the
 * progress counters (this wait does not bump them) and run_rep's join waits
 * for it, so the runner's stall watch reports it with the stacks and this
 * error (wl_shared's note).
 */
static int stepped_wait_parked(struct lctx *c, int n, char *err, size_t errlen)
{
	int parked;

	if (!lb_wait_reaches(&c->parked, n, LOCKSTEP_PARK_MS, &parked))
		return 0;
	snprintf(err, errlen, "lockstep: %d of %d threads of %s did not stop within %d ms",
	         n - parked, n, c->ops->name, LOCKSTEP_PARK_MS);
	/* run_rep's join may now hang on them: the runner's lockup message says why */
	snprintf(c->sh->note, sizeof(c->sh->note), "%s", err);
	return -1;
}

struct hot_turn {
	struct lctx *c;
	int n;
	struct rep *out;
	uint64_t ran; /* ns from waking the workers to all parked, over the turns */
	int us;       /* a turn (lockstep_hot_slice_us) */
};

/* One turn of hot_stepped (lockstep_slice_fn). */
static int hot_turn(void *arg, uint64_t turn_ns, char *err, size_t errlen)
{
	struct hot_turn *h = arg;
	struct lctx *c = h->c;
	struct rep *out = h->out;
	int n = h->n;

	int epoch = atomic_load(&c->run) + 1; /* odd */
	atomic_store(&c->parked, 0);
	uint64_t tw = lb_now_ns();
	atomic_store_explicit(&c->run, epoch, memory_order_release);
	lb_futex_wake(&c->run, n);
	uint64_t t0 = lb_now_ns();
	unsigned long c0 = progress_sum(c, n);
	lb_sleep_until(CLOCK_MONOTONIC, t0 + (uint64_t)h->us * 1000);
	uint64_t t1 = lb_now_ns();
	unsigned long c1 = progress_sum(c, n);
	atomic_store_explicit(&c->run, epoch + 1, memory_order_release);
	if (stepped_wait_parked(c, n, err, errlen))
		return -1;
	h->ran += lb_now_ns() - tw;
	if (out->nslices < REP_MAX_SLICES && t1 > t0)
		out->slices[out->nslices++] = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
	return 0;
}

/*
 * hot in lockstep (lockstep.h): the workers of this side run only in its
 * turns (lockstep_hot_slice_us: 1 ms up to 2 threads a CPU, longer past
 * that), and the other side's workers in the
 * others', so both see the same machine modes (base and patched alternate
 * every ms instead of every 30 ms sample).  A turn: wait for it, let the
 * workers run, read the progress counters at the start and the end of the
 * slice, stop them and wait until every one has parked (at the top of its
 * loop: none parks holding the lock; ops done while they drain fall in no
 * slice), pass the turn.  The slices' ops/s go to out->slices; the time from
 * wake to parked is the run's elapsed time for the per-thread figures.
 *
 * The sample is the mean of its slices' ops/s (the ops in this side's turns
 * over their time), not their median as run_rep's 10 ms slices: a 1 ms
 * turn's rate is bimodal at 2 and 4 threads on 2 vCPUs, and the median
 * jumps between the modes.  Same-binary pairs, 30 turns a sample (load 12):
 * per-sample spread of log(A/B) 12% (2 threads) and 13% (4) as the mean,
 * 21% and 28% as the median; one side after the other (no lockstep) 52%
 * and 39% (MAD-based).
 */
static int hot_stepped(struct lctx *c, int n, struct rep *out, char *err, size_t errlen)
{
	int us = lockstep_hot_slice_us(n, c->ncpus);
	long slices = (long)c->p->duration_ms * 1000 / us;
	struct hot_turn h = {.c = c, .n = n, .out = out, .us = us};

	/* a turn 50 us late (the default timer slack) is 5% longer than the other side's */
	prctl(PR_SET_TIMERSLACK, 1UL);
	if (stepped_wait_parked(c, n, err, errlen)) {
		lockstep_stop(c->p->lockstep);
		return -1;
	}
	if (lockstep_take_turns(c->p->lockstep, slices, &c->sh->progress[WL_MAX_THREADS].n,
	                        hot_turn, &h, NULL, err, errlen))
		return -1;
	out->elapsed_s = (double)h.ran / 1e9;
	return 0;
}

/* Throughput in 10 ms slices until duration_ms is over (run_rep). */
static void hot_slices(struct lctx *c, int n, struct rep *out)
{
	uint64_t t0 = lb_now_ns(), end = t0 + (uint64_t)c->p->duration_ms * 1000000, tl = t0;
	unsigned long last = 0;

	/*
	 * Throughput in 10 ms slices, from the threads' progress counters: the
	 * median slice is what the lock does when the machine lets it run, and
	 * a slice lost to another process on this shared machine does not move
	 * it.  (The totals still give fairness and per-thread figures.)
	 */
	for (;;) {
		uint64_t now = lb_now_ns();
		if (now >= end)
			break;
		uint64_t left = end - now, step = left < 10000000 ? left : 10000000;
		struct timespec sl = {0, (long)step};
		while (nanosleep(&sl, &sl) && errno == EINTR)
			;
		now = lb_now_ns();
		unsigned long cur = progress_sum(c, n);
		if (out->nslices < REP_MAX_SLICES && now > tl)
			out->slices[out->nslices++] =
			    (double)(cur - last) * 1e9 / (double)(now - tl);
		last = cur;
		tl = now;
	}
	out->elapsed_s = (double)(lb_now_ns() - t0) / 1e9;
}

/* One repetition: start the threads together, let them run, stop, check. */
static int run_rep(struct lctx *c, struct lthread *th, int n, struct rep *out, char *err,
                   size_t errlen)
{
	unsigned long before = 0, after = 0;
	int started = 0, rc = -1;
	double cpu0 = 0;

	for (int i = 0; i < c->nlocks; i++)
		before += c->guard[i].counter;
	atomic_store(&c->stop, 0);
	atomic_store(&c->run, 0);
	atomic_store(&c->parked, 0);
	lb_gate_init(&c->start);
	for (int i = 0; i < n; i++)
		atomic_store_explicit(&c->sh->progress[i].n, 0, memory_order_relaxed);
	for (int i = 0; i < n; i++) {
		th[i].ops = 0;
		th[i].violations = 0;
		if (pthread_create(&th[i].tid, NULL, lock_thread, &th[i])) {
			snprintf(err, errlen, "cannot create thread %d of %d", i + 1, n);
			atomic_store(&c->stop, 1);
			lb_gate_open(&c->start);
			goto join;
		}
		started++;
	}
	atomic_store(&c->sh->phase, WL_PHASE_MEASURE);
	cpu0 = cpu_seconds();
	lb_gate_open(&c->start);
	out->nslices = 0;
	if (c->stepped)
		rc = hot_stepped(c, n, out, err, errlen);
	else
		hot_slices(c, n, out);
	atomic_store_explicit(&c->stop, 1, memory_order_relaxed);
	atomic_store(&c->sh->phase, WL_PHASE_STOPPING);
	if (c->stepped) {
		atomic_store(&c->run, -2);
		lb_futex_wake(&c->run, n);
	} else
		rc = 0;
join:
	/* each thread joined is progress: stopping is slow on an emulated CPU too */
	for (int i = 0; i < started; i++) {
		pthread_join(th[i].tid, NULL);
		atomic_fetch_add_explicit(&c->sh->progress[WL_MAX_THREADS].n, 1,
		                          memory_order_relaxed);
	}
	out->cpu_s = cpu_seconds() - cpu0;
	lb_gate_destroy(&c->start);
	if (rc)
		return rc;
	out->total = 0;
	out->violations = 0;
	for (int i = 0; i < n; i++) {
		out->total += th[i].ops;
		out->violations += th[i].violations;
	}
	for (int i = 0; i < c->nlocks; i++)
		after += c->guard[i].counter;
	if (after - before != out->total)
		out->violations += 1;
	return 0;
}

/*
 * Jain's fairness index of the threads' acquisitions in one repetition,
 * (sum x)^2 / (n sum x^2): 1 when every thread got the same share, 1/n when
 * one thread got them all.  Per repetition, so a thread starved for a whole
 * repetition counts even when another one is starved in the next.  Unlike
 * min/max it does not hang on the single slowest thread, which on a shared
 * machine is often the one the scheduler preempted.
 */
static double jain_index(const double *x, int n)
{
	double sum = 0, sq = 0;

	for (int i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq > 0 ? sum * sum / (n * sq) : 0;
}

/*
 * Lockstep: the lock (and its guarded counter, on the next line) on a random
 * cache line of a freshly mapped page, a new one every repetition.  A lock
 * keeps its address for a whole process, and one placement in a few (the
 * line's set, its neighbours) moves hot's ops/s for all of that process's
 * samples; a new placement per sample puts that into the samples' spread,
 * where the two sides share it, instead of into one side.  Returns the
 * mapping (its length in *len), or NULL with errno set.
 */
static void *place_lock(struct lctx *c, uint64_t *rng, size_t *len)
{
	size_t lsize = (c->ops->size + LB_CACHELINE - 1) / LB_CACHELINE * LB_CACHELINE;
	size_t span = (lsize ? lsize : LB_CACHELINE) + sizeof(struct guarded);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t lines = page / LB_CACHELINE;

	*len = (span + page - 1) / page * page + page;
	char *map = mmap(NULL, *len, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	char *at = map + (xorshift(rng) % lines) * LB_CACHELINE;
	int e = c->ops->init(at);
	if (e) {
		munmap(map, *len);
		errno = e;
		return NULL;
	}
	c->locks[0] = at;
	c->guard = (struct guarded *)(at + span - sizeof(struct guarded));
	return map;
}

/* The figures of a contended workload, one entry per repetition. */
struct lw_series {
	double *ops_s, *fair, *cov, *cpu_op, *jain;
	double *worst;      /* long-hold: the worst thread's longest wait in each repetition */
	double *per_thread; /* one per thread: its ops/s, the mean over repetitions */
	unsigned long violations, total_ops;
	double total_cpu;
};

/*
 * The locks, their guards and n threads of c, and s's arrays for reps
 * repetitions.  0, or -1 with the reason in err; lw_release frees what
 * was made either way.
 */
static int lw_setup(struct lctx *c, struct lthread **thp, struct lw_series *s, int n, int reps,
                    char *err, size_t errlen)
{
	struct lthread *th;

	c->nlocks = c->mode == MODE_MANY ? c->p->nlocks : 1;
	c->locks = calloc((size_t)c->nlocks, sizeof(*c->locks));
	c->guard = aligned_alloc(LB_CACHELINE, sizeof(*c->guard) * (size_t)c->nlocks);
	th = *thp = aligned_alloc(LB_CACHELINE, sizeof(*th) * (size_t)n);
	if (th) /* before anything can fail: lw_release reads each thread's waits */
		memset(th, 0, sizeof(*th) * (size_t)n);
	s->ops_s = calloc((size_t)reps, sizeof(double));
	s->fair = calloc((size_t)reps, sizeof(double));
	s->cov = calloc((size_t)reps, sizeof(double));
	s->cpu_op = calloc((size_t)reps, sizeof(double));
	s->jain = calloc((size_t)reps, sizeof(double));
	s->worst = calloc((size_t)reps, sizeof(double));
	s->per_thread = calloc((size_t)n, sizeof(double));
	if (!c->locks || !c->guard || !th || !s->ops_s || !s->fair || !s->cov || !s->cpu_op ||
	    !s->jain || !s->worst || !s->per_thread) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(c->guard, 0, sizeof(*c->guard) * (size_t)c->nlocks);
	for (int i = 0; i < c->nlocks; i++) {
		c->locks[i] = lock_new(c->ops);
		if (!c->locks[i]) {
			snprintf(err, errlen, "cannot create lock %s: %s", c->ops->name,
			         strerror(errno));
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		th[i].idx = i;
		th[i].ctx = c;
		th[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) ^ lb_now_ns();
		if (c->mode == MODE_LONG_HOLD) {
			th[i].waits = malloc(sizeof(double) * MAX_WAITS_PER_THREAD);
			if (!th[i].waits) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
		}
	}
	/*
	 * hot in lockstep (lockstep.h): hot_stepped measures, worker i on CPU
	 * i % CPUs.  long-hold pins its workers the same way: a spinner or a
	 * re-locking holder can steal the lock from a woken waiter only while
	 * both run, and unpinned the scheduler of a loaded 2-CPU machine often
	 * stacked both threads on one CPU (docs/verdicts.md, the worst-wait rows).
	 */
	c->stepped = c->mode == MODE_HOT && c->p->lockstep;
	c->nthreads = n;
	cpu_set_t allowed;
	if ((c->stepped || c->mode == MODE_LONG_HOLD) &&
	    !sched_getaffinity(0, sizeof(allowed), &allowed))
		for (int k = 0; k < CPU_SETSIZE; k++)
			if (CPU_ISSET(k, &allowed))
				c->cpus[c->ncpus++] = k;
	return 0;
}

static void lw_release(struct lctx *c, struct lthread *th, struct lw_series *s, int n)
{
	if (c->locks)
		for (int i = 0; i < c->nlocks; i++)
			if (c->locks[i])
				lock_free(c->ops, c->locks[i]);
	if (th)
		for (int i = 0; i < n; i++)
			free(th[i].waits);
	free(s->per_thread);
	free(s->jain);
	free(s->worst);
	free(s->cpu_op);
	free(s->cov);
	free(s->fair);
	free(s->ops_s);
	free(th);
	free(c->guard);
	free(c->locks);
}

/* Repetition r's figures into s, from rr and the threads' counts. */
static void lw_rep_figures(const struct lctx *c, const struct lthread *th, int n, int reps, int r,
                           const struct rep *rr, struct lw_series *s)
{
	double mn = 0, mx = 0, thr[WL_MAX_THREADS];

	s->violations += rr->violations;
	s->total_ops += rr->total;
	s->total_cpu += rr->cpu_s;
	/* lockstep: the mean over the side's turns (hot_stepped says why) */
	struct stats_summary sum;
	stats_summarize(rr->slices, rr->nslices, &sum);
	if (c->stepped)
		s->ops_s[r] = sum.mean;
	else
		s->ops_s[r] = rr->nslices >= 3 ? stats_percentile(rr->slices, rr->nslices, 50)
		                               : rr->total / rr->elapsed_s;
	for (int i = 0; i < n; i++) {
		thr[i] = th[i].ops / rr->elapsed_s;
		s->per_thread[i] += thr[i] / reps;
		if (i == 0 || thr[i] < mn)
			mn = thr[i];
		if (i == 0 || thr[i] > mx)
			mx = thr[i];
	}
	s->fair[r] = mx > 0 ? mn / mx : 0;
	s->jain[r] = jain_index(thr, n);
	s->cov[r] = stats_cov(thr, (size_t)n);
	s->cpu_op[r] = rr->total ? rr->cpu_s * 1e9 / rr->total : 0;
	for (int i = 0; i < n && c->mode == MODE_LONG_HOLD; i++)
		for (size_t k = th[i].rep_from; k < th[i].nwaits; k++)
			if (th[i].waits[k] > s->worst[r])
				s->worst[r] = th[i].waits[k];
}

/*
 * Starvation where it happens: the longest wait of any thread, and each
 * thread's own p99.9 wait, the worst over the threads.  A waiter that a
 * re-locking holder or spinners keep stealing the lock from shows here,
 * however few acquisitions it made: pooled percentiles and Jain's index
 * weigh it by its share of them, and a starved thread's share is small.
 *
 * wait_worst_us is one sample, the median over the repetitions of each
 * repetition's longest wait (of its worst thread), as jain is: one
 * repetition in which the machine, not the lock, kept a thread off its CPU
 * moves a maximum over the whole run, and a lock that starves its waiter
 * does so in most repetitions.  Its per-thread figures are each thread's
 * longest wait over the run (wait_max_us is the longest of them).
 * wait_p999_worst_us pools each thread's waits over the repetitions (about
 * 1500 a thread in the quick suite: a p99.9 needs a thousand).  Only for a
 * lock whose waiters sleep (a woken waiter is what can be stolen from) at
 * more than one thread.
 */
static int lw_worst_waits(const struct lthread *th, int n, int reps, const struct lw_series *s,
                          struct lb_run *run, char *err, size_t errlen)
{
	double *mx = calloc((size_t)n, sizeof(double)), *p999 = calloc((size_t)n, sizeof(double));
	double worst = stats_percentile(s->worst, (size_t)reps, 50), worst999 = 0;
	int rc = -1;

	if (!mx || !p999) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		mx[i] = th[i].nwaits ? stats_percentile(th[i].waits, th[i].nwaits, 100) : 0;
		p999[i] = th[i].nwaits ? stats_percentile(th[i].waits, th[i].nwaits, 99.9) : 0;
		if (p999[i] > worst999)
			worst999 = p999[i];
	}
	wl_add_metric(run, "wait_worst_us", "us", false, &worst, 1, mx, (size_t)n);
	wl_add_metric(run, "wait_p999_worst_us", "us", false, &worst999, 1, p999, (size_t)n);
	rc = 0;
out:
	free(mx);
	free(p999);
	return rc;
}

/* long-hold's own rows: the waits' percentiles, CPU per acquisition, Jain's index. */
static int lw_long_hold_metrics(const struct lthread *th, int n, int reps,
                                const struct lw_series *s, struct lb_run *run, char *err,
                                size_t errlen)
{
	size_t nwaits = 0;
	for (int i = 0; i < n; i++)
		nwaits += th[i].nwaits;
	double *waits = malloc(sizeof(double) * (nwaits ? nwaits : 1));
	if (!waits) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nwaits = 0;
	for (int i = 0; i < n; i++) {
		memcpy(waits + nwaits, th[i].waits, th[i].nwaits * sizeof(double));
		nwaits += th[i].nwaits;
	}
	double p50 = stats_percentile(waits, nwaits, 50);
	double p99 = stats_percentile(waits, nwaits, 99);
	double mx = stats_percentile(waits, nwaits, 100);
	free(waits);
	wl_add_metric(run, "wait_p50_us", "us", false, &p50, 1, NULL, 0);
	wl_add_metric(run, "wait_p99_us", "us", false, &p99, 1, NULL, 0);
	wl_add_metric(run, "wait_max_us", "us", false, &mx, 1, NULL, 0);
	if (n > 1 && th[0].ctx->ops->sleeps && lw_worst_waits(th, n, reps, s, run, err, errlen))
		return -1;
	double cpu_acq = s->total_ops ? s->total_cpu * 1e6 / s->total_ops : 0;
	wl_add_metric(run, "cpu_us_per_acq", "us", false, &cpu_acq, 1, NULL, 0);
	/*
	 * One sample, the median over the repetitions: a repetition in
	 * which the scheduler, not the lock, starved a thread moves a mean
	 * (A/A spread of the round figure at 2 threads on this 2-CPU
	 * machine: 0.5-5% as median, 2.5-16% as mean; docs/measured/).
	 */
	double jmed = stats_percentile(s->jain, (size_t)reps, 50);
	if (n > 1)
		wl_add_metric(run, "jain", "index", true, &jmed, 1, NULL, 0);
	return 0;
}

static int lock_workload(enum mode mode, const struct lock_ops *ops, const struct wl_params *p,
                         struct wl_shared *sh, struct lb_run *run, char *err, size_t errlen)
{
	struct lctx c = {.ops = ops, .p = p, .sh = sh, .mode = mode};
	struct lthread *th = NULL;
	struct lw_series s = {0};
	int n = p->threads, rc = -1, reps = p->repeat;

	if (lw_setup(&c, &th, &s, n, reps, err, errlen))
		goto out;
	void *lock0 = c.locks[0];
	struct guarded *guard0 = c.guard;
	uint64_t rng = lb_now_ns() ^ (uint64_t)getpid() << 32;
	for (int r = 0; r < reps; r++) {
		static struct rep rr; /* 32 KiB: not on the stack */
		size_t maplen = 0;
		void *map = NULL;

		if (c.stepped && !(map = place_lock(&c, &rng, &maplen))) {
			snprintf(err, errlen, "cannot place lock %s: %s", ops->name,
			         strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++)
			th[i].rep_from = th[i].nwaits;
		int failed = run_rep(&c, th, n, &rr, err, errlen);
		if (map) {
			ops->destroy(c.locks[0]);
			munmap(map, maplen);
			c.locks[0] = lock0;
			c.guard = guard0;
		}
		if (failed)
			goto out;
		lw_rep_figures(&c, th, n, reps, r, &rr, &s);
	}
	atomic_store(&sh->phase, WL_PHASE_DONE);

	if (s.violations) {
		char msg[256];
		snprintf(msg, sizeof(msg),
		         "mutual exclusion violated: %lu failed checks in %lu acquisitions",
		         s.violations, s.total_ops);
		run_set_lockup(run, "exclusion", msg, NULL);
	}
	wl_add_metric(run, "ops_per_sec", "ops/s", true, s.ops_s, (size_t)reps, s.per_thread,
	              (size_t)n);
	if (mode == MODE_TORTURE) {
		rc = 0;
		goto out;
	}
	if (n > 1) {
		wl_add_metric(run, "fairness", "min/max", true, s.fair, (size_t)reps, NULL, 0);
		wl_add_metric(run, "cov", "stddev/mean", false, s.cov, (size_t)reps, NULL, 0);
	}
	if (p->threads > lb_online_cpus() && mode != MODE_LONG_HOLD)
		wl_add_metric(run, "cpu_ns_per_op", "ns", false, s.cpu_op, (size_t)reps, NULL, 0);
	if (mode == MODE_LONG_HOLD && lw_long_hold_metrics(th, n, reps, &s, run, err, errlen))
		goto out;
	rc = 0;
out:
	lw_release(&c, th, &s, n);
	return rc;
}

static int wl_hot(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                  struct lb_run *run, char *err, size_t errlen)
{
	return lock_workload(MODE_HOT, ops, p, sh, run, err, errlen);
}

static int wl_many(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                   struct lb_run *run, char *err, size_t errlen)
{
	return lock_workload(MODE_MANY, ops, p, sh, run, err, errlen);
}

static int wl_long_hold(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                        struct lb_run *run, char *err, size_t errlen)
{
	return lock_workload(MODE_LONG_HOLD, ops, p, sh, run, err, errlen);
}

static int wl_torture(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                      struct lb_run *run, char *err, size_t errlen)
{
	return lock_workload(MODE_TORTURE, ops, p, sh, run, err, errlen);
}

const struct workload wl_hot_def = {
    "hot", "N threads, one lock, tiny critical section: ops/s and fairness", true, false, wl_hot};
const struct workload wl_cs_sweep_def = {
    "cs-sweep", "critical-section length x outside work: ops/s", true, false, wl_hot};
const struct workload wl_many_locks_def = {
    "many-locks", "N threads, locks picked at random from --nlocks: ops/s", true, false, wl_many};
const struct workload wl_oversub_def = {
    "oversub", "threads 2-4x the CPUs: ops/s and CPU time per op", true, false, wl_hot};
const struct workload wl_long_hold_def = {"long-hold",
                                          "~100 us holds: worst wait of any thread, fairness "
                                          "(jain), wait p50/p99/max, CPU per acquisition",
                                          true, false, wl_long_hold};
const struct workload wl_torture_def = {
    "torture", "validate: exclusion, trylock, random short and long holds", true, true, wl_torture};
