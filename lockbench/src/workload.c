/* workload.c - the workload registry and what each one records. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stats.h"
#include "workload.h"
#include "workload_internal.h"

static const struct workload *const all[] = {
    &wl_uncontended_def, &wl_hot_def,       &wl_cs_sweep_def,     &wl_many_locks_def,
    &wl_oversub_def,     &wl_long_hold_def, &wl_wake_latency_def, &wl_futex_wake_def,
    &wl_futex_hash_def,  &wl_vfs_def,       &wl_aim7_def,         &wl_torture_def,
    &wl_pipe_mutex_def,  &wl_epoll_ctl_def, &wl_seq_read_def,     NULL,
};

const struct workload *const *workload_all(void)
{
	return all;
}

const struct workload *workload_find(const char *name)
{
	for (int i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

void wl_add_metric(struct lb_run *run, const char *name, const char *unit, bool higher_better,
                   const double *samples, size_t n, const double *per_thread, size_t nper_thread)
{
	struct stats_summary s;
	stats_summarize(samples, n, &s);
	struct lb_metric *m = run_add_metric(run, name, unit, higher_better, s.mean);
	for (size_t i = 0; i < n; i++)
		metric_add_sample(m, samples[i]);
	if (per_thread && nper_thread)
		metric_set_per_thread(m, per_thread, nper_thread);
}

long long wl_slot_start_ns(const struct wl_params *p, int r)
{
	long long k = (long long)p->slot_first + r;
	long long slot = 2 * k + (k % 2 == p->slot_side ? 0 : 1);

	return p->slot_at_ns + slot * p->slot_ms * 1000000ll;
}

void workload_record_params(const struct workload *w, const struct wl_params *p, struct lb_run *run)
{
	const char *n = w->name;

	if (!strcmp(n, "aim7-mix") || !strcmp(n, "pipe-mutex") || !strcmp(n, "epoll-ctl") ||
	    !strcmp(n, "seq-read"))
		run_set_param_num(run, "users", p->threads);
	else
		run_set_param_num(run, "threads", p->threads);
	if (strcmp(n, "futex-wake"))
		run_set_param_num(run, "duration_ms", p->duration_ms);
	if (!strcmp(n, "hot") || !strcmp(n, "cs-sweep") || !strcmp(n, "many-locks") ||
	    !strcmp(n, "oversub")) {
		run_set_param_num(run, "cs_loops", p->cs_loops);
		run_set_param_num(run, "outside_loops", p->outside_loops);
	}
	if (!strcmp(n, "many-locks"))
		run_set_param_num(run, "nlocks", p->nlocks);
	if (!strcmp(n, "long-hold") || !strcmp(n, "wake-latency"))
		run_set_param_num(run, "hold_us", p->hold_us);
	if (!strcmp(n, "futex-wake"))
		run_set_param_num(run, "wake_batch", p->wake_batch);
	if (!strcmp(n, "futex-hash"))
		run_set_param_num(run, "futexes", p->futexes);
}

void wl_pin_self(int cpu)
{
	cpu_set_t one;

	if (cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

void wl_sleep_ms(int ms)
{
	struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

static const char *default_dir(const struct wl_params *p)
{
	struct stat st;
	if (p->dir && *p->dir)
		return p->dir;
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode) && !access("/dev/shm", W_OK))
		return "/dev/shm"; /* tmpfs: the directory lock, not a disk */
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

int wl_make_workdir(const struct wl_params *p, char *out, size_t outlen, char *err, size_t errlen)
{
	snprintf(out, outlen, "%s/lockbench.XXXXXX", default_dir(p));
	if (!mkdtemp(out)) {
		snprintf(err, errlen, "cannot create a directory in %s: %s", default_dir(p),
		         strerror(errno));
		return -1;
	}
	return 0;
}

void wl_remove_workdir(const char *dir)
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
