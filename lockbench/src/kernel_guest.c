/*
 * kernel_guest.c - what `lockbench kernel run` knows of its guest
 * (kernel_guest.h): the lockup thresholds of an emulated boot, the
 * allowances for many users, the points recovered from a boot that locked
 * up, and the rows of a suite's bands.  Pure: no boot happens here.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "kernel_guest.h"
#include "lock.h"
#include "strutil.h"
#include "util.h"
#include "workload.h"

void kernel_guest_thresholds(bool emulated, double deadline_s, int hung_s, bool scale_hung,
                             struct kernel_thresholds *t)
{
	*t = (struct kernel_thresholds){.rcu_stall_s = KERNEL_RCU_STALL_S,
	                                .watchdog_thresh = KERNEL_WATCHDOG_THRESH,
	                                .hung_task_s = hung_s};
	if (!emulated)
		return;
	int third = deadline_s > 0 ? (int)(deadline_s / 3) : 0;
	int rcu = third < KERNEL_RCU_STALL_MAX_S ? third : KERNEL_RCU_STALL_MAX_S;
	int thresh = third / 2 < KERNEL_WATCHDOG_MAX ? third / 2 : KERNEL_WATCHDOG_MAX;
	if (rcu > t->rcu_stall_s) {
		t->rcu_stall_s = rcu;
		t->scaled = true;
	}
	if (thresh > t->watchdog_thresh) {
		t->watchdog_thresh = thresh;
		t->scaled = true;
	}
	if (scale_hung && third > t->hung_task_s) {
		t->hung_task_s = third;
		t->scaled = true;
	}
}

bool kernel_many_users(const char *suite, int users_max)
{
	return !strcmp(suite_canonical(suite), "users") || users_max > KERNEL_MANY_USERS;
}

int kernel_progress_s(double deadline_s)
{
	double p = deadline_s / 5;
	return p >= KERNEL_PROGRESS_MAX_S ? KERNEL_PROGRESS_MAX_S : p >= 1 ? (int)p : 1;
}

void kernel_thresholds_cmdline(const struct kernel_thresholds *t, char *out, size_t len)
{
	if (!t->scaled) {
		if (len)
			out[0] = 0;
		return;
	}
	/* after the boot's own sysctl.kernel.hung_task_timeout_secs: the later one is set last */
	lb_pathf(out, len,
	         "rcupdate.rcu_cpu_stall_timeout=%d watchdog_thresh=%d "
	         "sysctl.kernel.hung_task_timeout_secs=%d",
	         t->rcu_stall_s, t->watchdog_thresh, t->hung_task_s);
}

void kernel_thresholds_say(const struct kernel_thresholds *t, char *out, size_t len)
{
	lb_pathf(out, len, "RCU stall %d s, soft lockup %d s, hung task %d s", t->rcu_stall_s,
	         2 * t->watchdog_thresh, t->hung_task_s);
}

void kernel_copy_runs(struct lb_result *dst, const struct lb_result *src)
{
	for (size_t i = 0; i < src->nruns; i++) {
		const struct lb_run *s = &src->runs[i];
		struct lb_run *d = result_add_run(dst, s->workload, s->lock);
		for (size_t k = 0; k < s->nparams; k++) {
			if (s->params[k].is_num)
				run_set_param_num(d, s->params[k].name, s->params[k].num);
			else
				run_set_param_str(d, s->params[k].name, s->params[k].str);
		}
		for (size_t k = 0; k < s->nmetrics; k++) {
			const struct lb_metric *sm = &s->metrics[k];
			struct lb_metric *m =
			    run_add_metric(d, sm->name, sm->unit, sm->higher_better, sm->value);
			for (size_t j = 0; j < sm->nsamples; j++)
				metric_add_sample(m, sm->samples[j]);
			if (sm->nper_thread)
				metric_set_per_thread(m, sm->per_thread, sm->nper_thread);
		}
		if (s->lockup)
			run_set_lockup(d, s->lockup->kind, s->lockup->message, s->lockup->stacks);
	}
}

/*
 * The plan point the guest lockbench ran after the one whose table key
 * ("workload lock key") is last, NULL: its first point.  Added to res as a
 * run with that point's workload, lock and params; NULL when the plan cannot
 * be made or last was its final point.
 */
static struct lb_run *guest_next_point(struct lb_result *res, const struct kernel_guest_plan *g,
                                       const char *last)
{
	char err[256];
	int nw = 0, nl = 0, nu = 0;
	char **wn = lb_split_list(g->workloads, "--workloads", &nw, err, sizeof(err));
	char **ln = lb_split_list(g->locks, "--locks", &nl, err, sizeof(err));
	const struct workload **ws = strutil_xcalloc((size_t)nw + 1, sizeof(*ws));
	const struct lock_ops **ls = strutil_xcalloc((size_t)nl + 1, sizeof(*ls));
	int *users = NULL;
	struct plan plan = {0};
	struct lb_run *found = NULL;
	bool next = !last, ok = wn && ln;

	for (int i = 0; ok && i < nw; i++)
		ok = (ws[i] = workload_find(wn[i])) != NULL;
	for (int i = 0; ok && i < nl; i++)
		ok = (ls[i] = lock_find(ln[i])) != NULL;
	if (ok && g->users)
		ok = (nu = lb_parse_int_list(g->users, 1, WL_MAX_THREADS, &users, "--users", err,
		                             sizeof(err))) > 0;
	struct suite_overrides ov = {
	    .workloads = ws, .locks = ls, .threads = users, .nthreads = nu};
	if (!ok || suite_plan(g->suite, &ov, &plan, err, sizeof(err)))
		goto out;
	for (size_t i = 0; i < plan.n && !found; i++) {
		const struct plan_point *pt = &plan.points[i];
		const char *lock = pt->ops ? pt->ops->name : "kernel";
		struct lb_result tmp;
		result_init(&tmp);
		struct lb_run *run = result_add_run(&tmp, pt->w->name, lock);
		workload_record_params(pt->w, &pt->p, run);
		if (next) {
			found = result_add_run(res, pt->w->name, lock);
			workload_record_params(pt->w, &pt->p, found);
		} else {
			char *key = run_params_key(run);
			char line[768];
			lb_pathf(line, sizeof(line), "%s %s %s", pt->w->name, lock, key ? key : "");
			next = !strcmp(line, last);
			free(key);
		}
		result_release(&tmp);
	}
out:
	plan_release(&plan);
	free(users);
	free(ws);
	free(ls);
	lb_free_list(wn);
	lb_free_list(ln);
	return found;
}

size_t kernel_recover_boot(struct lb_result *res, char **lines, size_t n,
                           const struct kernel_guest_plan *g, const char *kind, const char *msg,
                           const char *stacks, const struct lb_run **running)
{
	char *last = NULL;
	bool started = false;
	size_t got = console_guest_table_runs(lines, n, res, &last);
	for (size_t i = 0; i < n && !started; i++)
		started = !strncmp(lines[i], "lockbench: suite ", 17);
	struct lb_run *run = started ? guest_next_point(res, g, last) : NULL;
	if (!run) {
		run = result_add_run(res, "lockbench-guest", "kernel");
		run_set_param_str(run, "workloads", g->workloads);
		if (g->band_users > 0)
			run_set_param_num(run, "users", g->band_users);
	}
	run_set_lockup(run, kind, msg, stacks);
	*running = run;
	free(last);
	return got;
}

size_t kernel_band_rows(const struct lb_result *res, const char *workload,
                        const struct suite_band *bands, size_t nbands, const bool *booted,
                        struct report_band_row *rows, const char **unit)
{
	size_t found = 0;
	*unit = NULL;
	for (size_t i = 0; i < nbands; i++) {
		struct report_band_row *row = &rows[i];
		*row = (struct report_band_row){
		    .umin = bands[i].umin, .umax = bands[i].umax, .users = bands[i].users};
		const struct lb_run *boot_lockup = NULL;
		for (size_t r = 0; r < res->nruns; r++) {
			const struct lb_run *run = &res->runs[r];
			const struct lb_param *pu = run_param(run, "users");
			if (!pu || !pu->is_num || pu->num != bands[i].users)
				continue;
			if (!strcmp(run->workload, "lockbench-guest") && run->lockup)
				boot_lockup = run;
			if (strcmp(run->workload, workload))
				continue;
			found++;
			if (run->lockup) {
				row->note = "lockup";
				row->kind = run->lockup->kind;
				continue;
			}
			if (run->nmetrics) {
				const struct lb_metric *m = &run->metrics[0];
				row->mean = m->value;
				row->n = m->nsamples ? m->nsamples : 1;
				*unit = m->unit;
			}
		}
		if (row->n || row->note)
			continue;
		if (boot_lockup) {
			row->note = "the band's boot locked up";
			row->kind = boot_lockup->lockup->kind;
		} else if (!booted[i])
			row->note = "not run: qemu failed before this band's boot";
		else
			row->note = "no figure (debug kernel, or the guest printed none)";
	}
	return found;
}
