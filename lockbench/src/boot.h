/*
 * boot.h - booting a kernel under qemu for `lockbench kernel run`: the
 * initramfs (a static init and lockbench), one qemu per boot with the
 * guest's console on a pipe, the accelerator choice (KVM when it works,
 * else TCG, settled once per run), and what a failed qemu looks like
 * (never a finding about the kernel: docs/kernel.md).
 */
#ifndef LOCKBENCH_BOOT_H
#define LOCKBENCH_BOOT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "strutil.h"

enum accel { ACCEL_AUTO, ACCEL_KVM, ACCEL_TCG };

/* One boot: the caller fills the first block, boot_run the second. */
/* guest memory unless struct boot says otherwise */
#define BOOT_MEM_MB 512

struct boot {
	const char *label;  /* "locktorture mutex_lock writers=2" */
	char cmdline[1024]; /* kernel command line */
	/* added to the command line under TCG only (the emulated CPU's lockup thresholds) */
	char tcg_cmdline[256];
	double deadline_s;   /* end qemu this long after start */
	const char *end_tag; /* the line that says the guest finished */
	int cpus;
	int mem_mb;               /* guest memory (qemu -m), 0: BOOT_MEM_MB */
	char guest_out[PATH_MAX]; /* the second serial port (ttyS1) goes here */
	char qemu_log[PATH_MAX];  /* qemu's own stderr goes here, apart from the console */
	/* filled by boot_run; console is owned by the struct (strutil_buf_release) */
	struct strutil_buf console; /* what the guest printed on ttyS0, nothing of qemu's */
	double secs;
	bool ended;     /* end_tag seen */
	bool timed_out; /* the deadline ended it */
	bool no_output; /* KVM probe: nothing printed in time */
	bool reported;  /* the guest printed a lockup report of its own */
	/* why qemu failed (boot_run returned -1): qemu's words or the errno */
	char qemu_error[1024];
};

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
