/*
 * suite.h - what a suite runs: the points (workload x lock x parameters)
 * of smoke, quick and full, narrowed by --locks and --workloads and
 * reshaped by the command-line overrides.
 */
#ifndef LOCKBENCH_SUITE_H
#define LOCKBENCH_SUITE_H

#include "lock.h"
#include "workload.h"

struct plan_point {
	const struct workload *w;
	const struct lock_ops *ops; /* NULL for kernel workloads */
	struct wl_params p;
	bool skipped; /* while planning: a hot point --skip-workloads drops (plan_build) */
};

struct plan {
	struct plan_point *points;
	size_t n, cap;
};

/* Overrides from the command line; 0 / NULL means the suite's own. */
struct suite_overrides {
	const struct lock_ops **locks; /* NULL-terminated or NULL */
	const struct workload **workloads;
	const struct workload **skip_workloads; /* left out (the duet ran them) */
	int *threads;
	int nthreads;
	int *cs_loops;
	int ncs;
	int *outside_loops;
	int noutside;
	int duration_ms;
	int repeat;
	int nlocks;
	int hold_us;
	int wake_batch;
	int futexes;
	const char *dir;
};

/* Names: "smoke", "quick", "full", "users".  Returns NULL when unknown. */
const char *const *suite_names(void);
/*
 * The name a suite is known by: "users" for "seeds" (its old name, still
 * accepted), name itself otherwise.  Returns a static string or name.
 */
const char *suite_canonical(const char *name);
bool suite_exists(const char *name);
const char *suite_description(const char *name);
/* True when the suite's uncontended points also count instructions_per_pair (instr.h). */
bool suite_counts_instructions(const char *name);

/*
 * AIM7's bands of users a kernel suite runs, each in a boot of its own
 * (`lockbench kernel run --suite users`): the band, the one user count it is
 * measured at, and that boot's limit under TCG, sized from measured boots
 * with a margin (suite.c says which).  Returns how many; 0 for a suite
 * without bands.
 */
struct suite_band {
	int umin, umax; /* the AIM7 band: 10 - 100 users */
	int users;      /* the count the band's boot runs */
	int limit_s;    /* the boot's deadline */
};
size_t suite_bands(const char *suite, const struct suite_band **bands);

/*
 * Build the plan (plan must be zeroed; release with plan_release).
 * Returns 0 or -1 with a reason in err.
 */
int suite_plan(const char *suite, const struct suite_overrides *ov, struct plan *plan, char *err,
               size_t errlen);
void plan_release(struct plan *plan);

#endif
