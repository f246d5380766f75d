/*
 * cmd_run.c - lockbench run (a suite's points: a table on stdout, the
 * lockbench-result/1 document with --json) and lockbench validate (every
 * lock's correctness torture).
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disturb.h"
#include "elfimage.h"
#include "instr.h"
#include "lockstep.h"
#include "stats.h"
#include "strutil.h"
#include "util.h"

#include "cli.h"
#include "run_args.h"

static const char *prog = "lockbench";

/* The file must be creatable: check before minutes of benchmarking. */
static int check_writable(const char *path)
{
	if (!strcmp(path, "-"))
		return 0;
	char *copy = strdup(path);
	if (!copy)
		return -1;
	const char *dir = dirname(copy);
	int ok = access(dir, W_OK | X_OK);
	if (ok)
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
	free(copy);
	return ok ? -1 : 0;
}

static void fmt_num(double v, char *out, size_t len)
{
	if (fabs(v) >= 1000) {
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "%.0f", fabs(v));
		size_t l = strlen(tmp), o = 0;
		if (v < 0 && o + 1 < len)
			out[o++] = '-';
		for (size_t i = 0; i < l && o + 2 < len; i++) {
			out[o++] = tmp[i];
			if ((l - i - 1) % 3 == 0 && i + 1 < l)
				out[o++] = ',';
		}
		out[o] = 0;
	} else if (fabs(v) >= 10) {
		snprintf(out, len, "%.1f", v);
	} else {
		snprintf(out, len, "%.3f", v);
	}
}

static void print_run(FILE *out, const struct lb_run *run)
{
	char *key = run_params_key(run), val[64];
	fprintf(out, "%-17s %-17s %-44s", run->workload, run->lock, key ? key : "");
	free(key);
	if (run->lockup) {
		fprintf(out, " LOCKUP (%s): %s\n", run->lockup->kind, run->lockup->message);
		fflush(out);
		return;
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct lb_metric *m = &run->metrics[i];
		fmt_num(m->value, val, sizeof(val));
		if (i == 0) {
			double cv = m->nsamples > 1 ? stats_cov(m->samples, m->nsamples) : 0;
			fprintf(out, " %s %s %s ±%.1f%% n=%zu", m->name, val, m->unit, cv * 100,
			        m->nsamples);
		} else {
			fprintf(out, "  %s %s", m->name, val);
		}
	}
	fprintf(out, "\n");
	fflush(out);
}

/*
 * The exact instrument (instr.h) for every uncontended run of a lock that
 * did not lock up: one valgrind run for all of them.  Without valgrind the
 * row is left out and stderr says why; a count is never made up.
 */
static void count_instructions(struct lb_result *res, FILE *tbl)
{
	const struct lock_ops **locks = strutil_xcalloc(res->nruns + 1, sizeof(*locks));
	double *per_pair = strutil_xcalloc(res->nruns + 1, sizeof(double));
	size_t n = 0;
	char why[512] = "";

	for (size_t i = 0; i < res->nruns; i++) {
		const struct lb_run *run = &res->runs[i];
		const struct lock_ops *ops = lock_find(run->lock);
		bool have = false;

		if (strcmp(run->workload, "uncontended") || run->lockup || !ops)
			continue;
		for (size_t k = 0; k < n; k++)
			have |= locks[k] == ops;
		if (!have)
			locks[n++] = ops;
	}
	if (!n)
		goto out;
	int rc = instr_count_locks(locks, n, per_pair, why, sizeof(why));
	if (rc) {
		fprintf(stderr, "%s: instructions_per_pair %s: %s\n", prog,
		        rc > 0 ? "left out (no instrument)" : "failed, left out", why);
		goto out;
	}
	for (size_t i = 0; i < res->nruns; i++) {
		struct lb_run *run = &res->runs[i];

		for (size_t k = 0; k < n; k++) {
			if (strcmp(run->workload, "uncontended") || run->lockup ||
			    strcmp(run->lock, locks[k]->name))
				continue;
			struct lb_metric *m = run_add_metric(run, "instructions_per_pair",
			                                     "instructions", false, per_pair[k]);
			metric_add_sample(m, per_pair[k]);
		}
	}
	if (tbl) {
		fprintf(tbl, "instructions_per_pair (valgrind, exact):");
		for (size_t k = 0; k < n; k++)
			fprintf(tbl, "%s %s %.1f", k ? "," : "", locks[k]->name, per_pair[k]);
		fputc('\n', tbl);
	}
out:
	free(per_pair);
	free(locks);
}

/* The metrics a lockstep point measured in turns with the other side. */
static void mark_lockstep(struct lb_run *run)
{
	static const char *const names[] = {"ns_per_pair", "ops_per_sec", "fairness", "cov"};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct lb_metric *m = (struct lb_metric *)run_metric(run, names[k]);
		if (m)
			metric_set_instrument(m, LB_INSTRUMENT_LOCKSTEP);
	}
}

/*
 * The run's options on every point of its plan: the disturbance limits,
 * and with --abba-side the slots of the single-thread samples (the k-th
 * such sample of the run is pair k).
 */
static void plan_apply_args(const struct run_args *a, struct plan *plan)
{
	for (size_t i = 0, slotted = 0; i < plan->n; i++) {
		struct wl_params *p = &plan->points[i].p;
		p->disturb_limit_pct = a->disturb_limit_pct;
		p->disturb_retries = a->disturb_retries;
		if (a->abba && !strcmp(plan->points[i].w->name, "uncontended")) {
			p->slot_at_ns = a->start_at_ns;
			p->slot_ms = p->duration_ms + LB_ABBA_GUARD_MS;
			p->slot_side = a->abba - 1;
			p->slot_first = (int)slotted;
			slotted += (size_t)p->repeat;
		}
	}
}

/* What the result says of itself before its runs: machine, suite, side, image, controls. */
static void result_head(const struct run_args *a, struct lb_result *res)
{
	char err[1024];

	result_fill_machine(res);
	res->suite = strdup(a->suite);
	res->variant = strdup(a->variant);
	res->round = a->round;
	{
		/* the code that measures: compare says when base and patched share it */
		char image[ELFIMAGE_LEN];

		if (elfimage_sha256("/proc/self/exe", image, err, sizeof(err)) == 0)
			res->image = strdup(image);
		else
			fprintf(stderr, "%s: this binary's image is not recorded: %s\n", prog, err);
	}
	for (int i = 0; a->controls && a->controls[i]; i++)
		result_add_control(res, ((const struct lock_ops *)a->controls[i])->name);
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {.suite = "smoke",
	                     .variant = "base",
	                     .instructions = -1,
	                     .ro = RUNNER_OPTS_DEFAULT,
	                     .disturb_limit_pct = DISTURB_LIMIT_DEFAULT,
	                     .disturb_retries = DISTURB_RETRIES_DEFAULT};
	struct plan plan = {0};
	struct lb_result res;
	struct lockstep *ls = NULL;
	char err[1024];
	int rc, lockups = 0, failures = 0;

	result_init(&res);
	rc = parse_run_args(argc, argv, &a);
	if (rc >= 0)
		goto out;
	if (a.json && check_writable(a.json)) {
		rc = 1;
		goto out;
	}
	if (suite_plan(a.suite, &a.ov, &plan, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = EXIT_USAGE;
		goto out;
	}
	plan_apply_args(&a, &plan);
	if (a.lockstep) {
		ls = lockstep_open(a.lockstep, a.lockstep_side - 1, err, sizeof(err));
		if (!ls) {
			fprintf(stderr, "%s: %s\n", prog, err);
			rc = 1;
			goto out;
		}
		/* single-thread points on one CPU; hot's threads on every CPU (workload_lock.c) */
		for (size_t i = 0; i < plan.n; i++)
			if (!strcmp(plan.points[i].w->name, "uncontended") ||
			    !strcmp(plan.points[i].w->name, "hot"))
				plan.points[i].p.lockstep = ls;
	}
	/* with --lockstep, --cpus pins the single-thread points: hot's run on these */
	cpu_set_t every;
	bool have_every = !sched_getaffinity(0, sizeof(every), &every);
	if (a.cpus && lb_cpus_pin(a.cpus, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = 1;
		goto out;
	}
	if (a.start_at_ns)
		lb_sleep_until(CLOCK_REALTIME, (uint64_t)a.start_at_ns);
	result_head(&a, &res);
	/* with the JSON on stdout, the table goes to stderr */
	FILE *tbl = a.quiet ? NULL : a.json && !strcmp(a.json, "-") ? stderr : stdout;
	if (tbl) {
		fprintf(tbl, "lockbench: suite %s, %zu points, %d CPUs (%s), kernel %s\n", a.suite,
		        plan.n, res.machine.cpus, res.machine.model, res.machine.kernel);
		fflush(tbl);
	}
	for (size_t i = 0; i < plan.n; i++) {
		struct plan_point *pt = &plan.points[i];
		size_t before = res.nruns;
		long alone0 = 0, alone1 = 0;
		bool unpin = pt->p.lockstep && a.cpus && have_every && !strcmp(pt->w->name, "hot");
		if (ls)
			lockstep_turns(ls, &alone0);
		if (unpin)
			sched_setaffinity(0, sizeof(every), &every);
		int failed =
		    runner_run_point(pt->w, pt->ops, &pt->p, &a.ro, &res, err, sizeof(err));
		if (unpin && lb_cpus_pin(a.cpus, err, sizeof(err)))
			fprintf(stderr, "%s: %s\n", prog, err);
		if (failed) {
			fprintf(stderr, "%s: %s\n", prog, err);
			failures++;
			continue;
		}
		if (res.nruns > before) {
			/* lockstep only when every turn of the point followed the other side's */
			if (ls)
				lockstep_turns(ls, &alone1);
			if (pt->p.lockstep && alone1 == alone0)
				mark_lockstep(&res.runs[before]);
			if (res.runs[before].lockup)
				lockups++;
			if (tbl)
				print_run(tbl, &res.runs[before]);
		}
	}
	if (ls) {
		/* the other side runs alone from here; the counts below take no turns */
		long alone, turns = lockstep_turns(ls, &alone);
		lockstep_done(ls);
		if (tbl)
			fprintf(tbl, "lockstep side %d: %ld turns, %ld of them alone\n",
			        a.lockstep_side - 1, turns, alone);
	}
	if (a.instructions == 1 || (a.instructions < 0 && suite_counts_instructions(a.suite)))
		count_instructions(&res, tbl);
	if (failures && !res.nruns) {
		fprintf(stderr, "%s: every point failed; no result written\n", prog);
		rc = 1;
		goto out;
	}
	if (a.json && result_write_file(&res, a.json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = 1;
		goto out;
	}
	if (tbl)
		fprintf(tbl, "%zu runs, %d locked up, %d failed to run\n", res.nruns, lockups,
		        failures);
	rc = failures ? 1 : lockups ? EXIT_LOCKUP : 0;
out:
	lockstep_close(ls);
	plan_release(&plan);
	result_release(&res);
	free_run_args(&a);
	return rc;
}

/*
 * validate: a lock is called checked only after enough acquisitions.  Fair
 * spin locks under 4x oversubscription manage about a hundred a second (each
 * handover waits for a preempted waiter's next time slice), so a lock short
 * of VALIDATE_MIN_ACQ in the first 500 ms runs again for longer, up to
 * VALIDATE_MAX_MS, unless --duration-ms was given.
 */
#define VALIDATE_MIN_ACQ 2000
#define VALIDATE_MAX_MS  5000

/* Acquisitions of a torture run: total and the least any thread made. */
static void validate_counts(const struct lb_run *run, int duration_ms, double *total, double *least)
{
	const struct lb_metric *m = run_metric(run, "ops_per_sec");

	*total = *least = 0;
	if (!m)
		return;
	*total = m->value * duration_ms / 1000.0;
	for (size_t k = 0; k < m->nper_thread; k++)
		if (k == 0 || m->per_thread[k] < *least)
			*least = m->per_thread[k];
	*least *= duration_ms / 1000.0;
}

/* Torture one lock; prints its line and returns true when it passed. */
static bool validate_lock(const struct lock_ops *ops, const struct run_args *a, int threads,
                          struct lb_result *res)
{
	const struct workload *torture = workload_find("torture");
	struct wl_params p = {.threads = a->ov.nthreads ? a->ov.threads[0] : threads,
	                      .duration_ms = a->ov.duration_ms ? a->ov.duration_ms : 500,
	                      .repeat = a->ov.repeat ? a->ov.repeat : 1};
	double total = 0, least = 0;
	const struct lb_run *run = NULL;
	char err[1024];

	for (;;) {
		size_t before = res->nruns;

		if (runner_run_point(torture, ops, &p, &a->ro, res, err, sizeof(err))) {
			printf("FAIL %-18s %s\n", ops->name, err);
			return false;
		}
		run = &res->runs[before];
		if (run->lockup)
			break;
		validate_counts(run, p.duration_ms, &total, &least);
		if (total >= VALIDATE_MIN_ACQ || a->ov.duration_ms ||
		    p.duration_ms >= VALIDATE_MAX_MS)
			break;
		/* not enough to call it checked: again, long enough for the minimum */
		double want = p.duration_ms * 1.5 * VALIDATE_MIN_ACQ / (total > 1 ? total : 1);
		p.duration_ms = want > VALIDATE_MAX_MS ? VALIDATE_MAX_MS : (int)want;
	}
	if (run->lockup) {
		printf("FAIL %-18s %s: %s\n", ops->name, run->lockup->kind, run->lockup->message);
		if (run->lockup->stacks) {
			/* the first lines say where the threads are */
			const char *s = run->lockup->stacks;
			for (int l = 0; l < 12 && *s; l++) {
				const char *nl = strchr(s, '\n');
				int len = nl ? (int)(nl - s) : (int)strlen(s);
				printf("     | %.*s\n", len, s);
				s = nl ? nl + 1 : s + len;
			}
		}
		return false;
	}
	printf("ok   %-18s %.0f acquisitions in %.1f s (%d threads, the fewest %.0f), no "
	       "violation%s\n",
	       ops->name, total, p.duration_ms / 1000.0, p.threads, least,
	       total < VALIDATE_MIN_ACQ ? " (few: a slow lock under oversubscription)" : "");
	return true;
}

int cmd_validate(int argc, char **argv)
{
	struct run_args a = {
	    .suite = "smoke", .variant = "base", .instructions = -1, .ro = RUNNER_OPTS_DEFAULT};
	struct lb_result res;
	const struct lock_ops *const *all = lock_all();
	char err[1024];
	int rc, failed = 0, checked = 0;

	result_init(&res);
	rc = parse_run_args(argc, argv, &a);
	if (rc >= 0)
		goto out;
	int threads = 4 * lb_online_cpus();
	printf("lockbench validate: %d threads (4x %d CPUs), exclusion, trylock on held, random "
	       "short and long holds, lost-wakeup watchdog; at least %d acquisitions a lock "
	       "(up to %d s)\n",
	       threads, lb_online_cpus(), VALIDATE_MIN_ACQ, VALIDATE_MAX_MS / 1000);
	for (int i = 0; all[i]; i++) {
		const struct lock_ops *ops = all[i];
		bool want = a.ov.locks == NULL ? !ops->test_only : false;
		for (int k = 0; a.ov.locks && a.ov.locks[k]; k++)
			want |= a.ov.locks[k] == ops;
		if (!want)
			continue;
		checked++;
		if (!validate_lock(ops, &a, threads, &res))
			failed++;
		fflush(stdout);
	}
	printf("%d locks checked, %d failed\n", checked, failed);
	if (a.json && result_write_file(&res, a.json, err, sizeof(err)))
		fprintf(stderr, "%s: %s\n", prog, err);
	rc = failed ? EXIT_LOCKUP : 0;
out:
	result_release(&res);
	free_run_args(&a);
	return rc;
}
