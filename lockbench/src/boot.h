/*
 * boot.h - booting a kernel under qemu for `lockbench kernel run`: the
 * initramfs (a static init and lockbench), one qemu per boot with the
 * guest's console on a pipe, the accelerator choice (KVM when it works,
 * else TCG, settled once per run), when a boot's deadline ends it (the
 * progress rule, a pure function unit-tested in test_boot_deadline.c), and
 * what a failed qemu looks like (never a finding about the kernel:
 * docs/kernel.md).
 */
#ifndef LOCKBENCH_BOOT_H
#define LOCKBENCH_BOOT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "strutil.h"

enum accel { ACCEL_AUTO, ACCEL_KVM, ACCEL_TCG };

/* A lockbench boot's hard cap, in deadlines (kernel run --cap-x). */
#define BOOT_CAP_X 4

/* Which half of the deadline rule ended a boot. */
enum boot_deadline_why {
	BOOT_DEADLINE_NONE,        /* it did not end the boot */
	BOOT_DEADLINE_NO_PROGRESS, /* deadline_s without progress */
	BOOT_DEADLINE_CAP,         /* cap_s after the start */
};

/*
 * The deadline rule, pure.  A boot whose last progress was last_progress_s
 * after its start (0: none yet; the start counts) ends at the returned time
 * (seconds after the start) unless it progresses before: limit_s after
 * that progress, or cap_s after the start when that comes first; cap_s <=
 * limit_s (0 included) makes the cap limit_s, the deadline from the start
 * alone.  *why says which (never BOOT_DEADLINE_NONE).
 */
double boot_deadline_at(double limit_s, double cap_s, double last_progress_s,
                        enum boot_deadline_why *why);

/* after a lockup report, boot_run keeps reading this long for the call traces */
#define BOOT_LOCKUP_GRACE_S 4.0
/* after the end marker, this long for the guest's power-off */
#define BOOT_END_GRACE_S 2.0

/* What a console line is to a boot's clock (or-ed). */
enum boot_line {
	BOOT_LINE_PROGRESS = 1, /* progress (struct boot's progress() takes it) */
	BOOT_LINE_LOCKUP = 2,   /* a lockup report of the guest's (console_lockup_kind) */
	BOOT_LINE_END = 4,      /* the end marker (struct boot's end_tag) */
};

/*
 * A boot's clock: when boot_run stops waiting for the console, apart from
 * qemu and the pipe, so that tests run the same bookkeeping
 * (boot_deadline_replay).  Times are seconds after the boot's start.  The
 * caller tells it each console line (boot_clock_line), asks it how long to
 * wait (boot_clock_until) and whether the wait is over (boot_clock_expired),
 * and ends with boot_clock_finish.  No resources: nothing to release.
 */
struct boot_clock {
	/* the rule, from boot_clock_init */
	double limit_s, cap_s; /* boot_deadline_at's; cap_s 0 without the progress rule */
	double probe_s;        /* > 0: give up when nothing is printed that long */
	bool follows;          /* progress lines count (struct boot's progress set) */
	/* what came */
	double lockup_s, end_s; /* the first lockup report, the end marker; -1: none */
	double last_progress_s; /* 0: none (the start counts) */
	double longest_wait_s;  /* the longest time without progress, so far */
	/* how the wait ended, from boot_clock_expired */
	bool timed_out;                  /* the deadline (ended_by says which half) */
	bool no_output;                  /* the probe: nothing printed in probe_s */
	enum boot_deadline_why why;      /* the deadline's half at the last boot_clock_until */
	enum boot_deadline_why ended_by; /* when timed_out */
};

/*
 * Start a clock for a boot with limit_s and cap_s (struct boot's
 * deadline_s and cap_s), follows: whether progress lines count (false: the
 * deadline counts from the start alone), probe_s > 0: the KVM probe.
 */
void boot_clock_init(struct boot_clock *c, double limit_s, double cap_s, bool follows,
                     double probe_s);

/* A console line at t; what: enum boot_line bits (0: none of them). */
void boot_clock_line(struct boot_clock *c, double t, unsigned what);

/*
 * When the wait ends (seconds after the start): the deadline
 * (boot_deadline_at, its half in c->why), brought forward by the lockup
 * grace, the end marker's grace and, while nothing is printed (printed
 * false), the probe.
 */
double boot_clock_until(struct boot_clock *c, bool printed);

/*
 * Whether the wait is over at now.  When it is: c->no_output for the probe,
 * else c->timed_out and c->ended_by when only the deadline was left (no
 * lockup report nor end marker).
 */
bool boot_clock_expired(struct boot_clock *c, double now, bool printed);

/* The boot ended at secs: the wait it ended in counts in longest_wait_s. */
void boot_clock_finish(struct boot_clock *c, double secs);

/*
 * A whole boot on a clock, as boot_run waits: progress lines at t[0..n)
 * (seconds after the start, ascending) and no end of its own; a line at or
 * after the time the rule ends the boot is not seen (qemu was already
 * ended).  Returns why it ends, with when in *end_s, the last progress seen
 * in *last_s (0: none), how many lines were seen in *seen and the longest
 * wait in *longest_s.
 */
enum boot_deadline_why boot_deadline_replay(const double *t, size_t n, double limit_s, double cap_s,
                                            double *end_s, double *last_s, size_t *seen,
                                            double *longest_s);

/* One boot: the caller fills the first block, boot_run the second. */
/* guest memory unless struct boot says otherwise */
#define BOOT_MEM_MB 512

struct boot {
	const char *label;  /* "locktorture mutex_lock writers=2" */
	char cmdline[1024]; /* kernel command line */
	/* added to the command line under TCG only (the emulated CPU's lockup thresholds) */
	char tcg_cmdline[256];
	/*
	 * The deadline (boot_deadline_at): end qemu deadline_s after the
	 * guest's last progress, a console line for which progress() is true
	 * (the start counts as progress), or cap_s after the start, whichever
	 * comes first.  progress NULL or cap_s <= deadline_s: deadline_s
	 * after the start, whatever the guest prints (the old rule).
	 */
	double deadline_s;
	double cap_s;
	bool (*progress)(const char *line);
	const char *end_tag; /* the line that says the guest finished */
	int cpus;
	int mem_mb;               /* guest memory (qemu -m), 0: BOOT_MEM_MB */
	char guest_out[PATH_MAX]; /* the second serial port (ttyS1) goes here */
	char qemu_log[PATH_MAX];  /* qemu's own stderr goes here, apart from the console */
	/* filled by boot_run; console is owned by the struct (strutil_buf_release) */
	struct strutil_buf console; /* what the guest printed on ttyS0, nothing of qemu's */
	double secs;
	bool ended;                      /* end_tag seen */
	bool timed_out;                  /* the deadline ended it (ended_by says which half) */
	bool no_output;                  /* KVM probe: nothing printed in time */
	bool reported;                   /* the guest printed a lockup report of its own */
	enum boot_deadline_why ended_by; /* when timed_out */
	double last_progress_s;          /* since the start; 0: none */
	double longest_wait_s;           /* the longest time without progress, to the end */
	/* why qemu failed (boot_run returned -1): qemu's words or the errno */
	char qemu_error[1024];
};

/*
 * The deadline in a boot's summary line, after boot_run: "limit 1500 s"
 * (the old rule) or "limit 1500 s without progress (longest wait 245 s),
 * cap 6000 s"; when the deadline ended the boot, then "; ended by no
 * progress for 1502 s" or "; ended by the cap, last progress 312 s before".
 */
void boot_deadline_say(const struct boot *b, char *out, size_t len);

/* CLOCK_MONOTONIC in seconds. */
double boot_now_s(void);

/*
 * Write an uncompressed newc initramfs at path with guest_dir's
 * locklab-init as /init and lockbench-static as /lockbench.  Returns 0, or
 * -1 with a message on stderr.
 */
int boot_make_initramfs(const char *guest_dir, const char *path);

/*
 * Boot once (boot.c says when the boot ends).  probe_ms > 0: give up
 * (b->no_output) when nothing is printed that long.  Returns 0 when the
 * guest ran and its console is to be read, -1 when qemu failed
 * (b->qemu_error says why).
 */
int boot_run(struct boot *b, const char *kernel, const char *initrd, enum accel accel,
             int probe_ms);

/*
 * Boot b, settling *accel on a run's first boot (ACCEL_AUTO: KVM when it
 * works, else TCG, said once in tbl); a qemu failure is tried once more.
 * Returns 0, or -1 with qemu's words on stderr.
 */
int boot_with_accel(struct boot *b, const char *kernel, const char *initrd, enum accel *accel,
                    FILE *tbl);

/* The host's TSC rate in kHz (for the guest's tsc_early_khz=), 0 when unknown. */
long boot_host_tsc_khz(void);

#endif
