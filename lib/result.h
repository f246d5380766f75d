/*
 * result.h - the lockbench-result/1 document: one run of a suite on one
 * machine, for one variant (base, patched, patch-K) and one round.
 *
 * Everything that computes verdicts or tables reads only this model, so the
 * JSON form is a contract: docs/result-schema.md describes it and
 * result_from_json refuses anything that does not follow it exactly.
 *
 * Ownership: struct lb_result owns every string and array below it.
 * result_init/result_release pair up; release leaves an initialised result.
 */
#ifndef LOCKLAB_RESULT_H
#define LOCKLAB_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define LB_SCHEMA "lockbench-result/1"

/*
 * A document's bounds, checked by result_from_json as it reads: every
 * string at most LB_MAX_STRING bytes, the machine's fields LB_MAX_MACHINE,
 * a lockup's stacks LB_MAX_STACKS; names (object keys) LB_MAX_KEY; a real
 * number below LB_REAL_LIMIT (2^63) in magnitude.  The server stores a
 * document as jsonb, which keeps a number as numeric and prints a real
 * written with an exponent in plain digits: 1e19 would come back as the
 * integer 10000000000000000000, which jansson refuses ("too big integer").
 * Everything below 2^63 (2^53, -0.0, the subnormals, 1e18) reads back as
 * the same double.
 */
#define LB_MAX_KEY     256
#define LB_MAX_STRING  4096
#define LB_MAX_MACHINE 256
#define LB_MAX_STACKS  (1024 * 1024)
#define LB_REAL_LIMIT  9223372036854775808.0

/* A workload parameter: "threads" = 4, "dir" = "/tmp/x". */
struct lb_param {
	char *name;
	bool is_num;
	long long num; /* when is_num */
	char *str;     /* when !is_num */
};

/*
 * What disturbed one kept sample, as shares of the sample's wall time:
 * hypervisor steal (/proc/stat, the CPU the thread started on), run-queue
 * delay of the measuring threads (schedstat), all time the measuring
 * threads wanted the CPU and did not run (wall minus their run time: both
 * of those plus interrupts); and counts of involuntary context switches
 * and CPU migrations of those threads.
 */
struct lb_disturb {
	double steal_pct;
	double delay_pct;
	double lost_pct;
	double nivcsw;
	double migrations;
};

/* Names of the instruments that measure a metric (JSON "instrument"). */
#define LB_INSTRUMENT_TIMED    "timed"
#define LB_INSTRUMENT_DUET     "duet"
#define LB_INSTRUMENT_LOCKSTEP "lockstep"
/* A lockstep turn, in ms (lockbench/src/lockstep.h says why this long). */
#define LB_LOCKSTEP_SLICE_MS 0.5
/* A turn of a multi-thread (hot) point: its threads' wake and park take a share of it. */
#define LB_LOCKSTEP_HOT_SLICE_MS 1.0
/* ... up to this long past 2 threads a CPU (lockbench/src/lockstep.h, lockstep_hot_slice_us). */
#define LB_LOCKSTEP_HOT_SLICE_MAX_MS 8.0
#define LB_INSTRUMENT_INSTRUCTIONS   "instructions"

struct lb_metric {
	char *name;         /* e.g. "ops_per_sec", "wake_ms", "jpm" */
	char *unit;         /* e.g. "ops/s", "ms", "JPM" */
	bool higher_better; /* JSON "better": "higher" | "lower" */
	double value;       /* the run's figure (mean of samples when any) */
	double *samples;    /* one per repetition; may be empty */
	size_t nsamples;
	double *per_thread; /* one per thread or process; may be empty */
	size_t nper_thread;
	/*
	 * JSON "disturbance" (optional): one entry per kept sample, how many
	 * samples were taken again because their disturbance passed
	 * disturb_limit_pct (0: recorded only, nothing repeated).
	 */
	struct lb_disturb *disturb;
	size_t ndisturb;
	int repeated;
	double disturb_limit_pct;
	/* JSON "instrument" (optional): LB_INSTRUMENT_*; NULL means timed */
	char *instrument;
};

struct lb_lockup {
	char *kind;    /* "stall", "deadline", "hung-task", "soft-lockup", ... */
	char *message; /* one line a person reads first */
	char *stacks;  /* thread stacks or console excerpt; may be NULL */
};

struct lb_run {
	char *workload;
	char *lock;
	struct lb_param *params;
	size_t nparams;
	struct lb_metric *metrics;
	size_t nmetrics;
	struct lb_lockup *lockup; /* NULL when the run completed */
};

/*
 * A kernel checker's report seen on a guest console (lockbench kernel run):
 * lockdep, might_sleep, WARN, BUG, KASAN, UBSAN, Oops.  One per key and
 * boot; compare counts the documents of each side that have a key.
 */
struct lb_splat {
	char *key;     /* LKP-style: "WARNING:possible_circular_locking_dependency_detected" */
	char *message; /* the kernel's first line of the report */
	char *lines;   /* the lines after it, through its call trace; may be NULL */
	char *boot;    /* the boot it came from ("locktorture mutex_lock writers=2"); may be NULL */
};

struct lb_machine {
	char *hostname;
	int cpus;
	char *model;
	char *kernel;
	/*
	 * A kernel run under TCG: the guest kernel's lockup thresholds its
	 * boots used ("lockbench users=2000: RCU stall 300 s, ..."); JSON
	 * "guest_thresholds", optional; NULL when not set.
	 */
	char *guest_thresholds;
};

struct lb_result {
	char *suite;
	char *variant; /* "base", "patched" or "patch-K" */
	int round;
	char *started; /* ISO 8601 UTC */
	struct lb_machine machine;
	struct lb_run *runs;
	size_t nruns;
	/*
	 * Locks run only as controls: code the submission did not touch, so
	 * whatever they show between base and patched is the machine's (a live
	 * A/A).  JSON "controls", optional; empty when the run names none.
	 */
	char **controls;
	size_t ncontrols;
	/* Kernel checker reports of the document's boots; JSON "splats", optional. */
	struct lb_splat *splats;
	size_t nsplats;
	/*
	 * The loaded image of the lockbench that measured, "sha256:<hex>"
	 * (elfimage.h); JSON "image", optional: lockbench run sets it, a
	 * kernel run (whose code under test is the kernel) does not.
	 */
	char *image;
};

void result_init(struct lb_result *r);
void result_release(struct lb_result *r);

/* Add a control lock (copied); a name already there is not added twice. */
void result_add_control(struct lb_result *r, const char *lock);

/* Add a splat (strings copied; lines and boot may be NULL). */
void result_add_splat(struct lb_result *r, const char *key, const char *message, const char *lines,
                      const char *boot);

/* True when r has a splat with this key. */
bool result_has_splat(const struct lb_result *r, const char *key);

/* True when lock is one of r's controls. */
bool result_is_control(const struct lb_result *r, const char *lock);

/* Fill machine from uname, sysconf and /proc/cpuinfo; started = now. */
void result_fill_machine(struct lb_result *r);

/*
 * Strings are copied.  Returned pointers stay valid until the next add of the
 * same kind (result_add_run on r, run_add_metric on run).  run_add_metric with
 * a name the run already has updates that metric and keeps its samples;
 * run_set_param_* on an existing name replaces the value.
 */
struct lb_run *result_add_run(struct lb_result *r, const char *workload, const char *lock);
void run_set_param_num(struct lb_run *run, const char *name, long long value);
void run_set_param_str(struct lb_run *run, const char *name, const char *value);
struct lb_metric *run_add_metric(struct lb_run *run, const char *name, const char *unit,
                                 bool higher_better, double value);
void metric_add_sample(struct lb_metric *m, double value);
void metric_set_per_thread(struct lb_metric *m, const double *values, size_t n);
/* Copy n disturbance entries (one per kept sample) and the repetition count. */
void metric_set_disturbance(struct lb_metric *m, const struct lb_disturb *d, size_t n, int repeated,
                            double limit_pct);
/* Name the instrument (copied; one of LB_INSTRUMENT_*). */
void metric_set_instrument(struct lb_metric *m, const char *instrument);
/* The metric's instrument: its own, or "timed". */
const char *metric_instrument(const struct lb_metric *m);
void run_set_lockup(struct lb_run *run, const char *kind, const char *message, const char *stacks);
/* Drop every metric of the run (a debug kernel's figures are not to be compared). */
void run_clear_metrics(struct lb_run *run);

/* Lookups; borrowed pointers or NULL. */
const struct lb_param *run_param(const struct lb_run *run, const char *name);
const struct lb_metric *run_metric(const struct lb_run *run, const char *name);

/*
 * "cs_ns=100,threads=4": the run's parameters in a stable order (names
 * sorted), for grouping equal points across documents.  Caller frees.
 */
char *run_params_key(const struct lb_run *run);

/*
 * New reference to the JSON document, or NULL when the model cannot be
 * written (a required string unset, a number that is not finite).
 */
json_t *result_to_json(const struct lb_result *r);

/*
 * Strictly validate doc and fill out (which must be initialised).  Returns 0,
 * or -1 with a one-line reason in err naming the offending field
 * ("runs[3].metrics.ops_per_sec: expected a number").  On failure out is
 * left empty.
 */
int result_from_json(const json_t *doc, struct lb_result *out, char *err, size_t errlen);
int result_load_buffer(const char *buf, size_t len, struct lb_result *out, char *err,
                       size_t errlen);
/* path "-" reads stdin. */
int result_load_file(const char *path, struct lb_result *out, char *err, size_t errlen);

/*
 * Write the document to path atomically (temporary file in the same folder,
 * then rename), so a failed run leaves no partial file; "-" writes stdout.
 * Returns 0 or -1 with a reason in err.
 */
int result_write_file(const struct lb_result *r, const char *path, char *err, size_t errlen);

#endif
