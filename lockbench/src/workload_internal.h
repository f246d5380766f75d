/* workload_internal.h - shared by the workload files only. */
#ifndef LOCKBENCH_WORKLOAD_INTERNAL_H
#define LOCKBENCH_WORKLOAD_INTERNAL_H

#include "workload.h"

/*
 * Add a metric whose value is the mean of samples (n >= 1); per_thread may
 * be NULL.  Copies everything.
 */
void wl_add_metric(struct lb_run *run, const char *name, const char *unit, bool higher_better,
                   const double *samples, size_t n, const double *per_thread, size_t nper_thread);

/* Pin the calling thread to cpu; cpu < 0: leave it where it may run. */
void wl_pin_self(int cpu);

/* Sleep ms milliseconds, through signals. */
void wl_sleep_ms(int ms);
/*
 * A new scratch directory for a workload in out: under --dir, else /dev/shm
 * (tmpfs) when writable, else $TMPDIR or /tmp.  0, or -1 with the reason.
 */
int wl_make_workdir(const struct wl_params *p, char *out, size_t outlen, char *err, size_t errlen);
/* Remove dir and the files in it. */
void wl_remove_workdir(const char *dir);

extern const struct workload wl_uncontended_def, wl_hot_def, wl_cs_sweep_def, wl_many_locks_def,
    wl_oversub_def, wl_long_hold_def, wl_wake_latency_def, wl_torture_def, wl_futex_wake_def,
    wl_futex_hash_def, wl_vfs_def, wl_aim7_def, wl_pipe_mutex_def, wl_epoll_ctl_def,
    wl_seq_read_def;

#endif
