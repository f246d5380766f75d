/* suite.c - the suites as data, and the plan a run follows (suite.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"
#include "util.h"

#define END 0

struct wl_setting {
	const char *workload;
	int threads[8]; /* END-terminated; oversub: multiples of the CPUs */
	int duration_ms;
	int repeat;
	int cs_loops[4]; /* -1-terminated lists; {-1} means the default */
	int outside_loops[4];
	bool sleepers; /* only the locks whose waiters sleep (lock_ops.sleeps) */
};

struct suite_def {
	const char *name;
	const char *description;
	struct wl_setting settings[12];
	/* uncontended points also count instructions_per_pair under valgrind (instr.h) */
	bool instructions;
};

#define DEF                                                                                        \
	{                                                                                          \
		-1                                                                                 \
	}

static const struct suite_def suites[] = {
    {"smoke",
     "seconds: every lock on uncontended and hot, futex-wake, vfs-creat-unlink (for tests)",
     {
         {"uncontended", {1, END}, 40, 2, DEF, DEF, false},
         {"hot", {2, 4, END}, 50, 2, DEF, DEF, false},
         {"futex-wake", {4, END}, 0, 3, DEF, DEF, false},
         {"vfs-creat-unlink", {2, END}, 40, 2, DEF, DEF, false},
     },
     false},
    {"quick",
     "about 25 s a round on 2 cores: every lock on uncontended (time and instructions) and "
     "hot, the sleeping locks on long-hold (fairness), oversub (2x, 4x the CPUs) and "
     "wake-latency, futex-wake, vfs-creat-unlink",
     {
         {"uncontended", {1, END}, 80, 3, DEF, DEF, false},
         {"hot", {2, 4, 8, END}, 100, 3, DEF, DEF, false},
         /* fairness and starvation under a long hold (jain), sleeping locks */
         {"long-hold", {2, END}, 60, 5, DEF, DEF, true},
         /*
          * oversubscription: 2x and 4x the CPUs, sleeping locks; a point
          * hot already runs (on 2 CPUs: both) is not run twice
          */
         {"oversub", {2, 4, END}, 100, 3, DEF, DEF, true},
         {"wake-latency", {2, END}, 60, 5, DEF, DEF, true},
         {"futex-wake", {2, 8, 32, END}, 0, 10, DEF, DEF, false},
         {"vfs-creat-unlink", {1, 2, 4, END}, 150, 3, DEF, DEF, false},
     },
     true},
    {"full",
     "everything: all eleven workloads over thread ramps (many minutes)",
     {
         {"uncontended", {1, END}, 200, 5, DEF, DEF, false},
         {"hot", {1, 2, 4, 8, 16, END}, 200, 5, DEF, DEF, false},
         {"cs-sweep", {4, END}, 200, 3, {0, 100, 1000, -1}, {0, 100, 1000, -1}, false},
         {"many-locks", {2, 4, 8, END}, 200, 3, DEF, DEF, false},
         {"oversub", {2, 3, 4, END}, 200, 3, DEF, DEF, false},
         {"long-hold", {2, 4, 8, END}, 500, 3, DEF, DEF, false},
         {"wake-latency", {2, END}, 200, 5, DEF, DEF, false},
         {"futex-wake", {2, 8, 32, 128, 512, END}, 0, 10, DEF, DEF, false},
         {"futex-hash", {1, 2, 4, END}, 200, 5, DEF, DEF, false},
         {"vfs-creat-unlink", {1, 2, 4, 8, END}, 200, 5, DEF, DEF, false},
         {"aim7-mix", {1, 2, 4, 8, 16, 32, END}, 1000, 3, DEF, DEF, false},
     },
     true},
    {"users",
     "AIM7's bands of users (10-100, 200-1000, 1100-2000) at one user count each (100, 1000, "
     "2000) on kernel struct mutexes driven from userspace (pipe-mutex, epoll-ctl, seq-read) "
     "and aim7-mix: for `lockbench kernel run --suite users` (old name: seeds), a boot per band",
     {
         {"pipe-mutex", {100, 1000, 2000, END}, 200, 2, DEF, DEF, false},
         {"epoll-ctl", {100, 1000, 2000, END}, 200, 2, DEF, DEF, false},
         {"seq-read", {100, 1000, 2000, END}, 200, 2, DEF, DEF, false},
         {"aim7-mix", {100, 1000, 2000, END}, 1000, 2, DEF, DEF, false},
     },
     false},
};

/*
 * The users suite's bands, a boot each: one user count a band (its top, where
 * AIM7's rows of a band end), every users workload at it.  The limits come
 * from boots measured under TCG on a loaded 2-core host (docs/kernel.md):
 * aim7-mix took about 270 s at 1000 users and 695 s at 2000 (one boot of its
 * own), the three mutex workloads about 4 minutes together at 2000 users
 * (tests/551-kernel-users.t less its aim7 part); each limit is at least
 * 1.5 times the band's sum.  No band needs more than the single boot's old 1500 s, so all
 * three fit.  Measured with these bands (docs/kernel.md, host load 10-23):
 * 31 s at 100 users, 457 s at 1000; at 2000 the base kernel's RCU stall
 * detector fired in aim7-mix after 331 s (SLOB under TCG), not the limit;
 * at host load 5-6 the same boot was clean in 243 s.
 */
static const struct suite_band users_bands[] = {
    {10, 100, 100, 600},
    {200, 1000, 1000, 900},
    {1100, 2000, 2000, 1500},
};

size_t suite_bands(const char *suite, const struct suite_band **bands)
{
	if (strcmp(suite_canonical(suite), "users")) {
		*bands = NULL;
		return 0;
	}
	*bands = users_bands;
	return sizeof(users_bands) / sizeof(users_bands[0]);
}

static const char *const names[] = {"smoke", "quick", "full", "users", NULL};

const char *suite_canonical(const char *name)
{
	/* the users suite's old name, accepted for one release */
	return strcmp(name, "seeds") ? name : "users";
}

const char *const *suite_names(void)
{
	return names;
}

static const struct suite_def *find(const char *name)
{
	name = suite_canonical(name);
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (!strcmp(suites[i].name, name))
			return &suites[i];
	return NULL;
}

bool suite_exists(const char *name)
{
	return find(name) != NULL;
}

const char *suite_description(const char *name)
{
	const struct suite_def *s = find(name);
	return s ? s->description : NULL;
}

bool suite_counts_instructions(const char *name)
{
	const struct suite_def *s = find(name);
	return s && s->instructions;
}

static int add(struct plan *plan, const struct plan_point *pt)
{
	if (plan->n == plan->cap) {
		size_t cap = plan->cap ? plan->cap * 2 : 64;
		struct plan_point *np = realloc(plan->points, cap * sizeof(*np));
		if (!np)
			return -1;
		plan->points = np;
		plan->cap = cap;
	}
	plan->points[plan->n++] = *pt;
	return 0;
}

/* Whether --workloads names w. */
static bool named_workload(const struct suite_overrides *ov, const struct workload *w)
{
	for (int i = 0; ov->workloads && ov->workloads[i]; i++)
		if (ov->workloads[i] == w)
			return true;
	return false;
}

static bool wanted_workload(const struct suite_overrides *ov, const struct workload *w)
{
	for (int i = 0; ov->skip_workloads && ov->skip_workloads[i]; i++)
		if (ov->skip_workloads[i] == w)
			return false;
	return !ov->workloads || named_workload(ov, w);
}

/*
 * Whether pt is an oversub point that hot already runs in the plan (oversub
 * is hot past the CPUs: on 2 CPUs, quick's hot at 4 and 8 threads is its
 * 2x and 4x), so the suite does not time it twice.
 */
static bool hot_runs(const struct plan *plan, const struct plan_point *pt)
{
	if (strcmp(pt->w->name, "oversub"))
		return false;
	for (size_t i = 0; i < plan->n; i++) {
		const struct plan_point *q = &plan->points[i];
		if (!strcmp(q->w->name, "hot") && q->ops == pt->ops &&
		    q->p.threads == pt->p.threads && q->p.cs_loops == pt->p.cs_loops &&
		    q->p.outside_loops == pt->p.outside_loops &&
		    q->p.duration_ms == pt->p.duration_ms && q->p.repeat == pt->p.repeat)
			return true;
	}
	return false;
}

/* Default knobs of a workload; the suite and the overrides refine them. */
static struct wl_params defaults(const struct workload *w)
{
	struct wl_params p = {
	    .threads = 1,
	    .duration_ms = 100,
	    .repeat = 3,
	    .cs_loops = 10,
	    .outside_loops = 10,
	    .nlocks = 100,
	    .hold_us = 100,
	    .wake_batch = 1,
	    .futexes = 1024,
	};
	if (!strcmp(w->name, "many-locks"))
		p.cs_loops = 50;
	if (!strcmp(w->name, "long-hold"))
		p.outside_loops = 1000;
	return p;
}

#define MAX_SETTINGS 24

/*
 * A workload that --workloads names and suite s lacks, shaped as the full
 * suite runs it (or, for the kernel-mutex workloads only the users suite
 * has, at its first band's users) but timed as s's hot.  false: no suite
 * has it.
 */
static bool borrowed_setting(const struct suite_def *s, const struct workload *w,
                             struct wl_setting *out)
{
	static const char *const from[] = {"full", "users"};

	for (int f = 0; f < 2; f++) {
		const struct suite_def *d = find(from[f]);
		for (int i = 0; i < 12 && d->settings[i].workload; i++) {
			if (strcmp(d->settings[i].workload, w->name))
				continue;
			*out = d->settings[i];
			if (f == 1)
				out->threads[1] = END;
			out->duration_ms = s->settings[1].duration_ms;
			out->repeat = s->settings[1].repeat;
			return true;
		}
	}
	return false;
}

/* The suite's settings, then those of workloads --workloads adds. */
static int plan_settings(const struct suite_def *s, const struct suite_overrides *ov,
                         struct wl_setting sets[MAX_SETTINGS])
{
	int nsets = 0;

	for (int i = 0; i < 12 && s->settings[i].workload; i++)
		sets[nsets++] = s->settings[i];
	for (int k = 0; ov->workloads && ov->workloads[k] && nsets < MAX_SETTINGS; k++) {
		bool have = false;
		for (int i = 0; i < nsets; i++)
			have |= !strcmp(sets[i].workload, ov->workloads[k]->name);
		if (!have && borrowed_setting(s, ov->workloads[k], &sets[nsets]))
			nsets++;
	}
	return nsets;
}

/* A setting's knobs: the workload's defaults, the suite's, the overrides. */
static struct wl_params setting_params(const struct suite_overrides *ov,
                                       const struct wl_setting *set, const struct workload *w)
{
	struct wl_params p = defaults(w);

	p.duration_ms = ov->duration_ms ? ov->duration_ms : set->duration_ms;
	if (!p.duration_ms)
		p.duration_ms = 100;
	p.repeat = ov->repeat ? ov->repeat : set->repeat;
	if (ov->nlocks)
		p.nlocks = ov->nlocks;
	if (ov->hold_us)
		p.hold_us = ov->hold_us;
	if (ov->wake_batch)
		p.wake_batch = ov->wake_batch;
	if (ov->futexes)
		p.futexes = ov->futexes;
	p.dir = ov->dir;
	return p;
}

/* The axes a setting's points span: threads x critical section x outside. */
struct plan_axes {
	int threads[64], nthreads;
	int cs[8], ncs;
	int out[8], nout;
};

/* Up to max of the -1-terminated list (of at most 4), else given[0..ngiven). */
static int axis(int *dst, int max, const int *given, int ngiven, const int *list, int dflt)
{
	int n = 0;

	if (ngiven)
		for (int i = 0; i < ngiven && i < max; i++)
			dst[n++] = given[i];
	else
		for (int i = 0; i < 4 && list[i] >= 0; i++)
			dst[n++] = list[i];
	if (!n)
		dst[n++] = dflt;
	return n;
}

static void setting_axes(const struct suite_overrides *ov, const struct wl_setting *set,
                         const struct workload *w, const struct wl_params *base, int cpus,
                         struct plan_axes *x)
{
	x->nthreads = 0;
	if (ov->nthreads) {
		for (int i = 0; i < ov->nthreads && i < 64; i++)
			x->threads[x->nthreads++] = ov->threads[i];
	} else {
		for (int i = 0; i < 8 && set->threads[i] != END; i++)
			x->threads[x->nthreads++] =
			    !strcmp(w->name, "oversub") ? set->threads[i] * cpus : set->threads[i];
	}
	if (!strcmp(w->name, "uncontended") || !strcmp(w->name, "wake-latency")) {
		x->threads[0] = !strcmp(w->name, "uncontended") ? 1 : 2;
		x->nthreads = 1;
	}
	x->ncs = axis(x->cs, 8, ov->cs_loops, ov->ncs, set->cs_loops, base->cs_loops);
	x->nout = axis(x->out, 8, ov->outside_loops, ov->noutside, set->outside_loops,
	               base->outside_loops);
}

/* Whether a setting runs on lock ops (--locks, test-only locks, sleepers). */
static bool setting_wants_lock(const struct suite_overrides *ov, const struct wl_setting *set,
                               const struct lock_ops *ops)
{
	bool want = !ov->locks;

	for (int k = 0; ov->locks && ov->locks[k]; k++)
		if (ov->locks[k] == ops)
			want = true;
	if (!want || (ops->test_only && !ov->locks))
		return false;
	/* unless --workloads names the workload itself */
	return !(set->sleepers && !ops->sleeps && !ov->workloads);
}

/* The points of one workload and lock across x; -1 with err said. */
static int plan_points(struct plan *plan, const struct plan_point *proto, const struct plan_axes *x,
                       char *err, size_t errlen)
{
	for (int ti = 0; ti < x->nthreads; ti++) {
		if (x->threads[ti] > WL_MAX_THREADS) {
			snprintf(err, errlen, "threads: %d is more than %d", x->threads[ti],
			         WL_MAX_THREADS);
			return -1;
		}
		for (int ci = 0; ci < x->ncs; ci++)
			for (int oi = 0; oi < x->nout; oi++) {
				struct plan_point pt = *proto;
				pt.p.threads = x->threads[ti];
				pt.p.cs_loops = x->cs[ci];
				pt.p.outside_loops = x->out[oi];
				if (hot_runs(plan, &pt))
					continue;
				if (add(plan, &pt)) {
					snprintf(err, errlen, "out of memory");
					return -1;
				}
			}
	}
	return 0;
}

int suite_plan(const char *suite, const struct suite_overrides *ov, struct plan *plan, char *err,
               size_t errlen)
{
	const struct suite_def *s = find(suite);
	const struct lock_ops *const *all = lock_all();
	int cpus = lb_online_cpus();
	struct wl_setting sets[MAX_SETTINGS];

	if (!s) {
		snprintf(err, errlen, "unknown suite '%s' (valid: smoke, quick, full)", suite);
		return -1;
	}
	int nsets = plan_settings(s, ov, sets);
	for (int wi = 0; wi < nsets; wi++) {
		const struct wl_setting *set = &sets[wi];
		const struct workload *w = workload_find(set->workload);
		/*
		 * A skipped hot is planned, and dropped at the end, so that the
		 * oversub points it would run stay out (the agent skips hot in a
		 * run whose hot points ran in lockstep beside the other side's).
		 */
		bool skip_hot = w && !strcmp(w->name, "hot") && !wanted_workload(ov, w) &&
		                !(ov->workloads && !named_workload(ov, w));
		if (!w || (!wanted_workload(ov, w) && !skip_hot))
			continue;
		/* --locks narrows to lock workloads unless kernel ones are named too */
		if (!w->uses_lock && ov->locks && !ov->workloads)
			continue;
		struct plan_point proto = {w, NULL, setting_params(ov, set, w), skip_hot};
		struct plan_axes x;
		setting_axes(ov, set, w, &proto.p, cpus, &x);
		for (int li = 0; w->uses_lock ? all[li] != NULL : li < 1; li++) {
			proto.ops = w->uses_lock ? all[li] : NULL;
			if (proto.ops && !setting_wants_lock(ov, set, proto.ops))
				continue;
			if (plan_points(plan, &proto, &x, err, errlen))
				return -1;
		}
	}
	size_t kept = 0;
	for (size_t i = 0; i < plan->n; i++)
		if (!plan->points[i].skipped)
			plan->points[kept++] = plan->points[i];
	plan->n = kept;
	/*
	 * What --skip-workloads leaves may be nothing (the agent's run of a
	 * round's rest after its lockstep of uncontended and hot, on smoke):
	 * an empty plan then, and a document with no runs.
	 */
	if (!plan->n && ov->skip_workloads && ov->skip_workloads[0])
		return 0;
	if (!plan->n) {
		snprintf(err, errlen,
		         "suite '%s' has nothing to run with these --locks and --workloads "
		         "(workloads of the suite: see 'lockbench list')",
		         suite);
		return -1;
	}
	return 0;
}

void plan_release(struct plan *plan)
{
	free(plan->points);
	memset(plan, 0, sizeof(*plan));
}
