/*
 * workload_uncontended.c - uncontended: one thread, lock/unlock pairs, ns
 * per pair; alone, in ABBA slots, or in lockstep with the other side.
 */

#include "disturb.h"
#include "lockstep.h"
#include "stats.h"
#include "util.h"
#include "workload.h"
#include "workload_internal.h"

struct unc_ctx {
	const struct lock_ops *ops;
	const struct wl_params *p;
	struct wl_shared *sh;
	double *ns;
	struct lb_disturb *disturb; /* per kept sample */
	int repeated;
	long long *slot_start; /* ABBA runs: CLOCK_REALTIME ns each sample started */
	char err[256];         /* a lockstep run that failed: why */
	uint64_t rnd;          /* the stack offsets' generator (unc_sample) */
};

#define UNC_BATCH       256
#define UNC_MAX_BATCHES (1 << 16)
#define UNC_SLICE_MIN   16

/* UNC_BATCH lock/unlock pairs, the progress counter told. */
static inline void unc_batch(struct unc_ctx *u, void *l, unsigned long *pairs)
{
	for (int i = 0; i < UNC_BATCH; i++) {
		u->ops->lock(l);
		u->ops->unlock(l);
	}
	*pairs += UNC_BATCH;
	atomic_store_explicit(&u->sh->progress[0].n, *pairs, memory_order_relaxed);
}

/* Batches from t0 for one slice, into batch. */
__attribute__((noinline)) static void unc_slice(struct unc_ctx *u, void *l, double *batch,
                                                size_t *nb, unsigned long *pairs, uint64_t t0)
{
	uint64_t tb = t0, t1, end = t0 + (uint64_t)LOCKSTEP_SLICE_US * 1000;
	int k = 0;
	/* at least UNC_SLICE_MIN batches: a preemption spoils one batch of a slice, not most */
	do {
		unc_batch(u, l, pairs);
		t1 = lb_now_ns();
		if (*nb < UNC_MAX_BATCHES)
			batch[(*nb)++] = (double)(t1 - tb) / UNC_BATCH;
		tb = t1;
	} while (++k < UNC_SLICE_MIN || t1 < end);
}

/*
 * One slice with the stack moved down by shift bytes: the lock's calls run
 * at a stack address of the slice's own (below).
 */
__attribute__((noinline)) static void unc_slice_at(struct unc_ctx *u, void *l, double *batch,
                                                   size_t *nb, unsigned long *pairs, uint64_t t0,
                                                   size_t shift)
{
	volatile char *pad = alloca(shift + 1);
	pad[0] = 0;
	unc_slice(u, l, batch, nb, pairs, t0);
	pad[shift] = 0;
}

struct unc_turn {
	struct unc_ctx *u;
	void *l;
	double *batch;
	size_t *nb;
	unsigned long *pairs;
};

/* One slice of unc_sample (lockstep_slice_fn), at a stack offset of its own. */
static int unc_turn(void *arg, uint64_t t0, char *err, size_t errlen)
{
	struct unc_turn *s = arg;
	struct unc_ctx *u = s->u;

	u->rnd = u->rnd * 6364136223846793005ull + 1442695040888963407ull;
	unc_slice_at(u, s->l, s->batch, s->nb, s->pairs, t0, (size_t)(u->rnd >> 58) * 64);
	return 0;
}

/*
 * One sample: duration_ms of this thread's own time in slices of
 * LOCKSTEP_SLICE_US, the batches of every slice into batch.
 *
 * Each slice runs at a random stack offset (a multiple of 64 bytes within
 * 4 KiB).  A process's stack lands at a random offset in its page, and one
 * offset in a few made every lock/unlock pair of that process slower: the
 * same binary measured 35.5 ns in one process where its partner measured
 * 22.5 ns in the same 0.5 ms turns (a 4 KiB alias of the stack with the
 * lock's line, most likely).  Offsets drawn per slice put a few of those
 * slices into every sample instead of every slice into a few processes, and
 * the median over batches does not see them.
 *
 * In lockstep (lockstep.h) lockstep_take_turns runs each slice in this
 * side's turn and passes the turn after; the other side's turns are not
 * this thread's wall time (m1).
 * Returns 0, or -1 with u->err set.
 */
static int unc_sample(struct unc_ctx *u, void *l, double *batch, size_t *nb, unsigned long *pairs,
                      int cpu, struct disturb_mark *m1)
{
	long slices = (long)u->p->duration_ms * 1000 / LOCKSTEP_SLICE_US;
	struct unc_turn s = {.u = u, .l = l, .batch = batch, .nb = nb, .pairs = pairs};
	uint64_t waited;

	if (lockstep_take_turns(u->p->lockstep, slices, &u->sh->progress[WL_MAX_THREADS].n,
	                        unc_turn, &s, &waited, u->err, sizeof(u->err)))
		return -1;
	disturb_mark(m1, cpu);
	m1->wall_ns -= waited;
	return 0;
}

/*
 * A repetition's figure is the median over batches of UNC_BATCH pairs of
 * the ns per pair in the batch: a preemption or an interrupt lands in a few
 * batches and does not move the median, where it would move the mean of the
 * whole run (this machine is shared).
 */
static void *uncontended_thread(void *arg)
{
	struct unc_ctx *u = arg;
	void *l = lock_new(u->ops);
	double *batch = malloc(sizeof(double) * UNC_MAX_BATCHES);
	if (!l || !batch) {
		free(batch);
		if (l)
			lock_free(u->ops, l);
		return NULL;
	}
	unsigned long pairs = 0;
	u->rnd = lb_now_ns() ^ (uint64_t)(uintptr_t)&pairs;
	for (int r = 0; r < u->p->repeat; r++) {
		for (int attempt = 0;; attempt++) {
			struct disturb_mark m0, m1;
			struct lb_disturb d;
			size_t nb = 0;

			/* an ABBA run: wait for this sample's slot (a retry does not) */
			if (u->p->slot_ms && attempt == 0) {
				lb_sleep_until(CLOCK_REALTIME, (uint64_t)wl_slot_start_ns(u->p, r));
				u->slot_start[r] = lb_realtime_ns();
			}
			disturb_mark(&m0, -1);
			if (unc_sample(u, l, batch, &nb, &pairs, m0.cpu, &m1))
				goto out;
			disturb_between(&m0, &m1, &d);
			/*
			 * A disturbed sample is taken again, not averaged in; when
			 * every try is disturbed, the least disturbed one is kept.
			 */
			if (attempt == 0 || d.lost_pct < u->disturb[r].lost_pct) {
				u->disturb[r] = d;
				u->ns[r] = stats_percentile(batch, nb, 50);
			}
			/* a sample taken again would put lockstep's sides out of step */
			if (attempt >= u->p->disturb_retries || u->p->lockstep ||
			    !disturb_exceeds(&d, u->p->disturb_limit_pct))
				break;
			u->repeated++;
		}
	}
out:
	free(batch);
	lock_free(u->ops, l);
	return NULL;
}

/*
 * An ABBA run says on stderr which slot each sample took and when it
 * started, from the shared --start-at instant: the operator's (and the
 * tests') view of the turns the two sides took.
 */
static void print_slots(const struct unc_ctx *u)
{
	const struct wl_params *p = u->p;

	fprintf(stderr, "lockbench: abba side %d, uncontended %s:", p->slot_side, u->ops->name);
	for (int r = 0; r < p->repeat; r++)
		fprintf(stderr, " slot %lld at %+.3f s",
		        (wl_slot_start_ns(p, r) - p->slot_at_ns) / (p->slot_ms * 1000000ll),
		        (double)(u->slot_start[r] - p->slot_at_ns) / 1e9);
	fprintf(stderr, "\n");
}

/*
 * One thread doing lock/unlock pairs.  It runs on a second thread so that
 * glibc has left its single-threaded fast path (which would make pthread
 * look 3x faster than it is in any real program).
 */
static int wl_uncontended(const struct lock_ops *ops, const struct wl_params *p,
                          struct wl_shared *sh, struct lb_run *run, char *err, size_t errlen)
{
	struct unc_ctx u = {.ops = ops,
	                    .p = p,
	                    .sh = sh,
	                    .ns = calloc((size_t)p->repeat, sizeof(double)),
	                    .disturb = calloc((size_t)p->repeat, sizeof(struct lb_disturb)),
	                    .slot_start = calloc((size_t)p->repeat, sizeof(long long))};
	pthread_t t;
	int rc = -1;

	if (!u.ns || !u.disturb || !u.slot_start) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	atomic_store(&sh->phase, WL_PHASE_MEASURE);
	if (pthread_create(&t, NULL, uncontended_thread, &u)) {
		snprintf(err, errlen, "cannot create thread");
		goto out;
	}
	pthread_join(t, NULL);
	if (u.err[0]) {
		snprintf(err, errlen, "%s", u.err);
		goto out;
	}
	if (u.ns[0] == 0) {
		snprintf(err, errlen, "cannot create lock %s", ops->name);
		goto out;
	}
	if (p->slot_ms)
		print_slots(&u);
	wl_add_metric(run, "ns_per_pair", "ns", false, u.ns, (size_t)p->repeat, NULL, 0);
	metric_set_disturbance((struct lb_metric *)run_metric(run, "ns_per_pair"), u.disturb,
	                       (size_t)p->repeat, u.repeated, p->disturb_limit_pct);
	rc = 0;
out:
	free(u.slot_start);
	free(u.disturb);
	free(u.ns);
	return rc;
}

const struct workload wl_uncontended_def = {
    "uncontended", "one thread, lock/unlock pairs: ns per pair", true, false, wl_uncontended};
