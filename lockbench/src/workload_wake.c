/*
 * workload_wake.c - wake-latency: two threads on one CPU, from a holder's
 * unlock to the return of lock() in a waiter that slept on it.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "stats.h"
#include "util.h"
#include "workload_internal.h"

#define WAKE_MAX_PER_REP 65536

/* wake-latency: a holder and a waiter that sleeps on the held lock. */
struct wake_ctx {
	const struct lock_ops *ops;
	const struct wl_params *p;
	struct wl_shared *sh;
	void *lock;
	_Alignas(LB_CACHELINE) atomic_ulong go;     /* the iteration the waiter may ask in */
	_Alignas(LB_CACHELINE) atomic_ulong asking; /* the iteration the waiter is asking in */
	_Alignas(LB_CACHELINE) atomic_ulong done;   /* the last iteration the waiter ended */
	atomic_int stop;
	/* written by the holder under the lock, read by the waiter under it */
	_Alignas(LB_CACHELINE) uint64_t unlock_ns;
	int held;
	unsigned long violations;
	double *lat; /* the waiter's: µs from unlock to its lock() returning */
	size_t nlat;
	unsigned long asked; /* iterations the waiter asked in */
	int cpu;             /* where both threads run, -1 anywhere */
};

static unsigned long voluntary_switches(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return (unsigned long)ru.ru_nvcsw;
}

/*
 * The waiter: asks for the lock while the holder holds it, so that it goes
 * to sleep, and times from the holder's unlock to its own lock() returning.
 * Only the acquisitions it slept in (a voluntary context switch inside
 * lock()) are wake-ups; one that arrived late or spun its way in is not
 * counted.
 */
static void *wake_waiter(void *arg)
{
	struct wake_ctx *c = arg;

	wl_pin_self(c->cpu);
	for (unsigned long i = 1;; i++) {
		/* pairs with the holder's release store of go */
		while (atomic_load_explicit(&c->go, memory_order_acquire) < i)
			if (atomic_load_explicit(&c->stop, memory_order_relaxed))
				return NULL;
			else
				sched_yield();
		unsigned long sw0 = voluntary_switches();
		/* pairs with the holder's acquire load of asking */
		atomic_store_explicit(&c->asking, i, memory_order_release);
		c->ops->lock(c->lock);
		uint64_t t = lb_now_ns(), u = c->unlock_ns;
		if (c->held)
			c->violations++;
		unsigned long sw1 = voluntary_switches();
		c->ops->unlock(c->lock);
		c->asked++;
		if (sw1 > sw0 && t > u && c->nlat < WAKE_MAX_PER_REP)
			c->lat[c->nlat++] = (double)(t - u) / 1e3;
		atomic_store_explicit(&c->sh->progress[1].n, i, memory_order_relaxed);
		/* pairs with the holder's acquire load of done */
		atomic_store_explicit(&c->done, i, memory_order_release);
	}
}

/*
 * The holder: takes the lock, lets the waiter ask, then sleeps hold_us
 * holding it (sleeping, so that a waiter on the same CPU gets to run and go
 * to sleep in lock()), unlocks and waits for the waiter to be done.
 */
static void wake_holder(struct wake_ctx *c)
{
	uint64_t end = lb_now_ns() + (uint64_t)c->p->duration_ms * 1000000;
	struct timespec hold = {c->p->hold_us / 1000000, (long)(c->p->hold_us % 1000000) * 1000};

	for (unsigned long i = 1; lb_now_ns() < end; i++) {
		c->ops->lock(c->lock);
		c->held = 1;
		atomic_store_explicit(&c->go, i, memory_order_release);
		while (atomic_load_explicit(&c->asking, memory_order_acquire) < i)
			sched_yield();
		nanosleep(&hold, NULL);
		c->held = 0;
		c->unlock_ns = lb_now_ns();
		c->ops->unlock(c->lock);
		while (atomic_load_explicit(&c->done, memory_order_acquire) < i)
			sched_yield();
		atomic_store_explicit(&c->sh->progress[0].n, i, memory_order_relaxed);
	}
	atomic_store_explicit(&c->stop, 1, memory_order_relaxed);
}

/*
 * Wake-up latency: the time from a holder's unlock to the return of lock()
 * in a waiter that slept on the lock, as p50 and p99 per repetition.  What
 * a sleeping lock's unlock and wake path cost (futex wake, the scheduler,
 * a handoff), which neither hot nor long-hold isolates.  Two threads, on
 * one CPU.
 */
static int wl_wake_latency(const struct lock_ops *ops, const struct wl_params *p,
                           struct wl_shared *sh, struct lb_run *run, char *err, size_t errlen)
{
	struct wake_ctx *c = aligned_alloc(LB_CACHELINE, sizeof(*c));
	double *p50 = calloc((size_t)p->repeat, sizeof(double));
	double *p99 = calloc((size_t)p->repeat, sizeof(double));
	double *slept = calloc((size_t)p->repeat, sizeof(double));
	size_t nrep = 0;
	int rc = -1;

	if (c)
		memset(c, 0, sizeof(*c));
	if (!c || !p50 || !p99 || !slept || !(c->lat = malloc(sizeof(double) * WAKE_MAX_PER_REP))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	c->ops = ops;
	c->p = p;
	c->sh = sh;
	c->lock = lock_new(ops);
	if (!c->lock) {
		snprintf(err, errlen, "cannot create lock %s: %s", ops->name, strerror(errno));
		goto out;
	}
	atomic_store(&sh->phase, WL_PHASE_MEASURE);
	/*
	 * Both threads on one CPU (the first this process may use): the woken
	 * waiter runs when the holder yields, so the figure is the lock's
	 * unlock and wake path and a context switch.  Apart, a cross-CPU wake
	 * on this 2-vCPU VM waits for the host to run an idle vCPU: p50 23 us
	 * with samples of 460 us, p99 0.7-8 ms, where on one CPU p50 is
	 * 1.5-5 us within 2-7% a sample.
	 */
	cpu_set_t allowed;
	c->cpu = -1;
	if (!sched_getaffinity(0, sizeof(allowed), &allowed))
		for (int k = 0; k < CPU_SETSIZE && c->cpu < 0; k++)
			if (CPU_ISSET(k, &allowed))
				c->cpu = k;
	wl_pin_self(c->cpu);
	for (int r = 0; r < p->repeat; r++) {
		pthread_t t;

		atomic_store(&c->go, 0);
		atomic_store(&c->asking, 0);
		atomic_store(&c->done, 0);
		atomic_store(&c->stop, 0);
		c->nlat = 0;
		c->asked = 0;
		if (pthread_create(&t, NULL, wake_waiter, c)) {
			snprintf(err, errlen, "cannot create thread");
			goto out;
		}
		wake_holder(c);
		pthread_join(t, NULL);
		/* a repetition with no wake-up (the waiter never slept) has no figure */
		if (!c->nlat)
			continue;
		p50[nrep] = stats_percentile(c->lat, c->nlat, 50);
		p99[nrep] = stats_percentile(c->lat, c->nlat, 99);
		slept[nrep] = 100.0 * (double)c->nlat / (double)c->asked;
		nrep++;
	}
	atomic_store(&sh->phase, WL_PHASE_DONE);
	if (c->violations) {
		char msg[256];
		snprintf(msg, sizeof(msg),
		         "mutual exclusion violated: the waiter got the lock "
		         "while the holder held it, %lu times",
		         c->violations);
		run_set_lockup(run, "exclusion", msg, NULL);
	}
	if (nrep) {
		wl_add_metric(run, "wakeup_p50_us", "us", false, p50, nrep, NULL, 0);
		wl_add_metric(run, "wakeup_p99_us", "us", false, p99, nrep, NULL, 0);
		wl_add_metric(run, "slept_pct", "%", true, slept, nrep, NULL, 0);
	} else {
		/* a lock whose waiters never sleep (a spin lock) has no wake-up to time */
		double zero = 0;
		wl_add_metric(run, "slept_pct", "%", true, &zero, 1, NULL, 0);
	}
	rc = 0;
out:
	if (c && c->lock)
		lock_free(ops, c->lock);
	if (c)
		free(c->lat);
	free(slept);
	free(p99);
	free(p50);
	free(c);
	return rc;
}

const struct workload wl_wake_latency_def = {
    "wake-latency",
    "2 threads on one CPU: from a holder's unlock to the return of lock() in a waiter that "
    "slept on it, p50 and p99",
    true, false, wl_wake_latency};
