/*
 * test_boot_run.c - boot_run's own bookkeeping (boot.h) against a stand-in
 * for qemu: a shell script named qemu-system-x86_64 first on $PATH (boot_run
 * runs argv[0] with execvp, as any program) that prints what a guest's
 * console would, with sleeps.  It checks why a boot ended, in order and in
 * ranges of seconds wide enough for a loaded host, never exact times.  About
 * 25 s in all; a script boot_run did not end ends by itself within 80 s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/boot.h"
#include "../src/console.h"

/* a finished point's table line, as the guest lockbench prints it */
#define POINT_LINE                                                                                 \
	"pipe-mutex        kernel            duration_ms=200,users=100           ops_per_sec "     \
	"27,637 "                                                                                  \
	"ops/s \xc2\xb1"                                                                           \
	"12.5% n=2"

/* sh printing a line every 0.4 s, 40 times at most */
#define EVERY_0_4_S(quoted)                                                                        \
	"i=0; while [ $i -lt 40 ]; do echo " quoted "; sleep 0.4; i=$((i+1)); done"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/lb-boot-run-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	const char *path = getenv("PATH");
	char *p = NULL;
	if (asprintf(&p, "%s:%s", dir, path ? path : "/usr/bin:/bin") < 0)
		return -1;
	setenv("PATH", p, 1);
	free(p);
	return 0;
}

static int teardown(void **state)
{
	const char *const files[] = {"qemu-system-x86_64", "guest.out", "qemu.log", NULL};
	char p[128];
	for (int i = 0; files[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
	return 0;
}

/* The stand-in qemu runs body (sh) and then, like a qemu whose guest is quiet, waits. */
static void fake_qemu(const char *body)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/qemu-system-x86_64", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\nexec sleep 60\n", body);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, 0755), 0);
}

static void boot_init(struct boot *b, double limit_s, double cap_s)
{
	memset(b, 0, sizeof(*b));
	b->label = "fake";
	b->deadline_s = limit_s;
	b->cap_s = cap_s;
	b->progress = console_guest_progress;
	b->end_tag = "LOCKLAB-END";
	b->cpus = 1;
	snprintf(b->guest_out, sizeof(b->guest_out), "%s/guest.out", dir);
	snprintf(b->qemu_log, sizeof(b->qemu_log), "%s/qemu.log", dir);
}

static size_t progress_lines(const struct boot *b)
{
	size_t n, k = 0;
	struct strutil_buf copy = STRUTIL_BUF_INIT;
	strutil_buf_addlen(&copy, b->console.buf, b->console.len);
	char **lines = console_lines(copy.buf, &n);
	for (size_t i = 0; i < n; i++)
		k += console_guest_progress(lines[i]);
	free(lines);
	strutil_buf_release(&copy);
	return k;
}

/*
 * Progress every second for 4 s, then nothing: a 4 s limit ends it about
 * 4 s after the last point, long before the 20 s cap, having seen all five.
 * (Upper bounds on seconds are loose: they tell a deadline from the
 * script's own end, not how fast a loaded machine wakes.)
 */
static void test_no_progress(void **state)
{
	struct boot b;
	char said[256];
	assert_true(console_guest_progress(POINT_LINE));
	fake_qemu("echo 'lockbench: suite users, 4 points'\n"
	          "for i in 1 2 3 4; do sleep 1; echo '" POINT_LINE "'; done");
	boot_init(&b, 4, 20);
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_TCG, 0), 0);
	assert_int_equal(progress_lines(&b), 5);
	assert_true(b.timed_out && !b.ended && !b.reported && !b.no_output);
	assert_int_equal(b.ended_by, BOOT_DEADLINE_NO_PROGRESS);
	assert_true(b.last_progress_s >= 3.5 && b.last_progress_s < 12);
	assert_true(b.secs - b.last_progress_s >= 4 && b.secs - b.last_progress_s < 12);
	/* the wait it ended in is the longest; the points came 1 s apart */
	assert_true(b.longest_wait_s == b.secs - b.last_progress_s);
	assert_true(b.secs < 20);
	boot_deadline_say(&b, said, sizeof(said));
	assert_non_null(strstr(said, "; ended by no progress for "));
	strutil_buf_release(&b.console);
}

/* Progress every 0.4 s for up to 16 s: the 8 s cap ends it, never the 4 s limit. */
static void test_cap(void **state)
{
	struct boot b;
	char said[256];
	fake_qemu(EVERY_0_4_S("'" POINT_LINE "'"));
	boot_init(&b, 4, 8);
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_TCG, 0), 0);
	assert_true(b.timed_out && !b.ended);
	assert_int_equal(b.ended_by, BOOT_DEADLINE_CAP);
	assert_true(b.secs >= 8 && b.secs < 15);
	assert_true(b.longest_wait_s < 4);
	assert_true(progress_lines(&b) > 3 && progress_lines(&b) < 40);
	boot_deadline_say(&b, said, sizeof(said));
	assert_non_null(strstr(said, "; ended by the cap, last progress "));
	strutil_buf_release(&b.console);
}

/* The old rule (no progress function): the limit from the start, whatever is printed. */
static void test_old_rule(void **state)
{
	struct boot b;
	fake_qemu(EVERY_0_4_S("'" POINT_LINE "'"));
	boot_init(&b, 2, 20);
	b.progress = NULL;
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_TCG, 0), 0);
	assert_true(b.timed_out && b.secs >= 2 && b.secs < 12);
	assert_int_equal(b.ended_by, BOOT_DEADLINE_CAP);
	assert_true(b.last_progress_s == 0 && b.longest_wait_s == 0);
	strutil_buf_release(&b.console);
}

/* The end marker and the power-off end the boot at once, not as a timeout. */
static void test_end(void **state)
{
	struct boot b;
	fake_qemu("echo '" POINT_LINE "'\necho LOCKLAB-END\necho 'reboot: Power down'");
	boot_init(&b, 10, 40);
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_TCG, 0), 0);
	assert_true(b.ended && !b.timed_out && !b.reported);
	assert_int_equal(b.ended_by, BOOT_DEADLINE_NONE);
	assert_true(b.secs < 15);
	strutil_buf_release(&b.console);
}

/* A lockup report: read on for the call traces, then end; not a timeout. */
static void test_lockup(void **state)
{
	struct boot b;
	fake_qemu(
	    "echo 'watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [exe:123]'\n" EVERY_0_4_S(
	        "'" POINT_LINE "'"));
	boot_init(&b, 10, 40);
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_TCG, 0), 0);
	assert_true(b.reported && !b.timed_out && !b.ended);
	assert_true(b.secs >= BOOT_LOCKUP_GRACE_S && b.secs < 20);
	strutil_buf_release(&b.console);
}

/* qemu failing is -1 with its words, never a finding about the kernel. */
static void test_qemu_fails(void **state)
{
	struct boot b;
	fake_qemu("echo 'qemu-system-x86_64: could not load kernel' >&2\nexit 1");
	boot_init(&b, 10, 40);
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_TCG, 0), -1);
	assert_non_null(strstr(b.qemu_error, "exited with status 1: "
	                                     "qemu-system-x86_64: could not load kernel"));
	assert_false(b.timed_out);
	strutil_buf_release(&b.console);
}

/* The KVM probe: a guest that prints nothing is given up after probe_ms. */
static void test_probe(void **state)
{
	struct boot b;
	fake_qemu(":");
	boot_init(&b, 10, 40);
	assert_int_equal(boot_run(&b, "bzImage", "initrd", ACCEL_KVM, 1000), 0);
	assert_true(b.no_output && !b.timed_out);
	assert_true(b.secs >= 1 && b.secs < 12);
	strutil_buf_release(&b.console);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_progress), cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_old_rule),    cmocka_unit_test(test_end),
	    cmocka_unit_test(test_lockup),      cmocka_unit_test(test_qemu_fails),
	    cmocka_unit_test(test_probe),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
