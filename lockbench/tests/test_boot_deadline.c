/*
 * test_boot_deadline.c - when a boot's deadline ends it (boot.h): the
 * lines of a real console that are the guest's progress
 * (console_guest_progress), the rule (boot_deadline_at, replayed over a
 * boot by boot_deadline_replay on boot_run's own clock, struct boot_clock,
 * whose other reasons to stop waiting are tested here too), the words of a
 * boot it ended
 * (console_detect_lockup, boot_deadline_say).
 *
 * The captured consoles (lockbench/tests/data) carry no host times: the
 * kernel's printk time stamps are off in the measuring build and the guest
 * lockbench's table lines are not printk's.  So the tests below give the
 * console's line i the arrival time 30 * i s, a guest slow enough (56 lines
 * in 28 minutes) that the old rule ends it after its first point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../src/boot.h"
#include "../src/console.h"

/* The 2000-user band's boot of 2026-12-01 (test_kernel_bands.c says more). */
#define STALL_CONSOLE "lockbench/tests/data/console-users-2000-rcu-stall.log"
#define HUNG_CONSOLE  "lockbench/tests/data/console-users-2000-hung-task.log"
#define SECS_PER_LINE 30.0

static char **read_console(const char *path, struct strutil_buf *text, size_t *n)
{
	if (strutil_read_file(path, text))
		fail_msg("cannot read %s (run from the top of the tree)", path);
	return console_lines(text->buf, n);
}

/* The arrival times of the console's progress lines, line i at 30 * i s. */
static size_t progress_times(char **lines, size_t n, double *t, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k < max; i++)
		if (console_guest_progress(lines[i]))
			t[k++] = SECS_PER_LINE * (double)i;
	return k;
}

/*
 * On the real consoles: the guest lockbench's start and its three finished
 * points, nothing of the kernel's (the RCU stall, the hung task, their
 * call traces) nor the init's markers.
 */
static void test_progress_lines(void **state)
{
	const char *const files[] = {STALL_CONSOLE, HUNG_CONSOLE};
	for (int f = 0; f < 2; f++) {
		struct strutil_buf text = STRUTIL_BUF_INIT;
		size_t n, found = 0;
		char **lines = read_console(files[f], &text, &n);
		const char *first = NULL;
		for (size_t i = 0; i < n; i++) {
			if (!console_guest_progress(lines[i]))
				continue;
			if (!found++)
				first = lines[i];
			else
				assert_true(strstr(lines[i], "duration_ms=200,users=2000") != NULL);
		}
		assert_int_equal(found, 4);
		assert_true(!strncmp(first, "lockbench: suite users, 4 points", 32));
		free(lines);
		strutil_buf_release(&text);
	}
}

/* As qemu gives them: a '\r', a time stamp; and the lines that are not progress. */
static void test_progress_raw_lines(void **state)
{
	assert_true(console_guest_progress(
	    "pipe-mutex        kernel            duration_ms=200,users=100           "
	    "ops_per_sec 27,637 ops/s \xc2\xb1"
	    "12.5% n=2\r"));
	assert_true(console_guest_progress(
	    "aim7-mix          kernel            duration_ms=200,users=2000          LOCKUP "
	    "(stall): no thread made progress for 150.0 s\r"));
	assert_true(console_guest_progress("[   12.345678] lockbench: suite users, 1 points\r"));
	/* a point's progress line (--progress-s): a long aim7-mix point is alive */
	assert_true(console_guest_progress(
	    "lockbench: aim7-mix kernel 2000 users: 81234 operations so far (840.0 s)\r"));
	/* the init's memory line every 20 s is a timer's, not work */
	assert_false(console_guest_progress("LOCKLAB-MEM available_kb=1400000 total_kb=1500000\r"));
	assert_false(console_guest_progress("LOCKLAB-JSON-BEGIN ttyS1"));
	assert_false(console_guest_progress("LOCKLAB-GUEST kernel=6.1.192 cpus=2"));
	assert_false(console_guest_progress("[    3.1] random: crng init done"));
	assert_false(console_guest_progress(
	    "task:exe             state:D stack:0     pid:19639 ppid:17693  flags:0x00000000"));
	assert_false(console_guest_progress("rcu: INFO: rcu_preempt self-detected stall on CPU"));
	assert_false(console_guest_progress(""));
}

/* The rule's two halves, and the old rule (no cap beyond the limit). */
static void test_rule(void **state)
{
	enum boot_deadline_why why;
	/* nothing yet: the limit counts from the start */
	assert_true(boot_deadline_at(1500, 6000, 0, &why) == 1500);
	assert_int_equal(why, BOOT_DEADLINE_NO_PROGRESS);
	assert_true(boot_deadline_at(1500, 6000, 2000, &why) == 3500);
	assert_int_equal(why, BOOT_DEADLINE_NO_PROGRESS);
	/* progress late in the boot: the cap comes first */
	assert_true(boot_deadline_at(1500, 6000, 5000, &why) == 6000);
	assert_int_equal(why, BOOT_DEADLINE_CAP);
	/* cap 0 or not above the limit: the deadline from the start, whatever came */
	assert_true(boot_deadline_at(1500, 0, 700, &why) == 1500);
	assert_int_equal(why, BOOT_DEADLINE_CAP);
	assert_true(boot_deadline_at(1500, 1500, 700, &why) == 1500);
	assert_true(boot_deadline_at(1500, 1000, 0, &why) == 1500);
}

/*
 * The real console's progress at 30 s a line (the start at 210 s, points at
 * 360, 390, 420 s) under a 300 s limit: the old rule ends the boot at 300 s
 * having seen the start only; the progress rule lets it run its three points
 * and ends it 300 s after the last (the RCU stall at 450 s ends it first in
 * a real boot: boot_run's lockup grace); a 400 s cap ends it at 400 s.
 */
static void test_replay_real_console(void **state)
{
	struct strutil_buf text = STRUTIL_BUF_INIT;
	size_t n, seen;
	char **lines = read_console(STALL_CONSOLE, &text, &n);
	double t[16], end, last, longest;
	size_t k = progress_times(lines, n, t, 16);

	assert_int_equal(k, 4);
	assert_true(t[0] == 210 && t[1] == 360 && t[2] == 390 && t[3] == 420);

	assert_int_equal(boot_deadline_replay(t, k, 300, 0, &end, &last, &seen, &longest),
	                 BOOT_DEADLINE_CAP);
	assert_true(end == 300 && last == 210 && longest == 210);
	assert_int_equal(seen, 1);

	assert_int_equal(boot_deadline_replay(t, k, 300, 4 * 300, &end, &last, &seen, &longest),
	                 BOOT_DEADLINE_NO_PROGRESS);
	/* the longest wait: the last point's 300 s (the start's 210 s before it) */
	assert_true(end == 720 && last == 420 && longest == 300);
	assert_int_equal(seen, 4);

	assert_int_equal(boot_deadline_replay(t, k, 300, 400, &end, &last, &seen, &longest),
	                 BOOT_DEADLINE_CAP);
	assert_true(end == 400 && last == 390 && longest == 210);
	assert_int_equal(seen, 3);

	/* a wait longer than the limit (here the guest lockbench's start) ends it there */
	assert_int_equal(boot_deadline_replay(t, k, 200, 4 * 200, &end, &last, &seen, &longest),
	                 BOOT_DEADLINE_NO_PROGRESS);
	assert_true(end == 200 && last == 0 && longest == 200);
	assert_int_equal(seen, 0);
	free(lines);
	strutil_buf_release(&text);
}

/*
 * The 2000-user band at host load 9-14 (docs/kernel.md): slow, not stuck.
 * Its four points at 400, 800, 1200 and 1600 s, its end at 1650 s: the old
 * 1500 s deadline ended it with aim7-mix unfinished; the progress rule ends
 * nothing before 3100 s, and a guest that stops progressing after its
 * first point is ended 1500 s later, as before.
 */
static void test_slow_band(void **state)
{
	const double t[] = {400, 800, 1200, 1600}, guest_end = 1650;
	double end, last, longest;
	size_t seen;

	boot_deadline_replay(t, 4, 1500, 0, &end, &last, &seen, &longest);
	assert_true(end < guest_end);
	assert_int_equal(seen, 3);
	boot_deadline_replay(t, 4, 1500, BOOT_CAP_X * 1500, &end, &last, &seen, &longest);
	assert_true(end == 3100 && end > guest_end && longest == 1500);
	assert_int_equal(seen, 4);
	assert_int_equal(
	    boot_deadline_replay(t, 1, 1500, BOOT_CAP_X * 1500, &end, &last, &seen, &longest),
	    BOOT_DEADLINE_NO_PROGRESS);
	assert_true(end == 1900);
}

/*
 * boot_run's other reasons to stop waiting, on its clock: a lockup report
 * keeps the boot BOOT_LOCKUP_GRACE_S for its call traces and the end marker
 * BOOT_END_GRACE_S for the power-off, neither of them the deadline; the KVM
 * probe gives up on a guest that printed nothing; without the progress
 * rule, progress lines move nothing.
 */
static void test_clock_other_ends(void **state)
{
	struct boot_clock c;

	boot_clock_init(&c, 300, 1200, true, 0);
	boot_clock_line(&c, 10, BOOT_LINE_PROGRESS);
	assert_true(boot_clock_until(&c, true) == 310);
	assert_int_equal(c.why, BOOT_DEADLINE_NO_PROGRESS);
	boot_clock_line(&c, 50, BOOT_LINE_LOCKUP);
	/* the first report's grace counts; progress still counts */
	boot_clock_line(&c, 52, BOOT_LINE_LOCKUP | BOOT_LINE_PROGRESS);
	assert_true(boot_clock_until(&c, true) == 50 + BOOT_LOCKUP_GRACE_S);
	assert_false(boot_clock_expired(&c, 53.9, true));
	assert_true(boot_clock_expired(&c, 54, true));
	assert_false(c.timed_out || c.no_output);
	assert_int_equal(c.ended_by, BOOT_DEADLINE_NONE);
	boot_clock_finish(&c, 54.5);
	assert_true(c.last_progress_s == 52 && c.longest_wait_s == 42);

	boot_clock_init(&c, 300, 1200, true, 0);
	boot_clock_line(&c, 100, BOOT_LINE_END);
	assert_true(boot_clock_until(&c, true) == 100 + BOOT_END_GRACE_S);
	assert_true(boot_clock_expired(&c, 102.5, true));
	assert_false(c.timed_out);
	boot_clock_finish(&c, 102.5);
	assert_true(c.longest_wait_s == 102.5);

	/* the probe: nothing printed in 5 s; once something is, the deadline holds */
	boot_clock_init(&c, 300, 0, false, 5);
	assert_true(boot_clock_until(&c, false) == 5 && boot_clock_until(&c, true) == 300);
	assert_true(boot_clock_expired(&c, 5, false));
	assert_true(c.no_output && !c.timed_out);
	boot_clock_init(&c, 300, 0, false, 5);
	assert_false(boot_clock_expired(&c, 5, true));
	assert_true(boot_clock_expired(&c, 300, true));
	assert_true(c.timed_out && !c.no_output);
	assert_int_equal(c.ended_by, BOOT_DEADLINE_CAP);

	/* no progress rule (locktorture): the limit from the start, no waits counted */
	boot_clock_init(&c, 60, 1200, false, 0);
	boot_clock_line(&c, 50, BOOT_LINE_PROGRESS);
	assert_true(boot_clock_until(&c, true) == 60 && c.last_progress_s == 0);
	assert_true(boot_clock_expired(&c, 60, true));
	assert_int_equal(c.ended_by, BOOT_DEADLINE_CAP);
	boot_clock_finish(&c, 60);
	assert_true(c.longest_wait_s == 0);
}

/*
 * A boot the rule ended: the lockup is still "deadline" with the same
 * words, plus how long since the last progress; the summary says which half.
 */
static void test_words(void **state)
{
	struct strutil_buf text = STRUTIL_BUF_INIT, stacks = STRUTIL_BUF_INIT;
	size_t n;
	char **lines = read_console(STALL_CONSOLE, &text, &n), msg[512], said[256];
	const char *kind;
	/* the console up to the last finished point, before the RCU stall */
	size_t upto = 15;
	assert_true(strstr(lines[upto - 1], "seq-read") != NULL);

	struct console_end old = {.timed_out = true, .secs = 1500.2};
	assert_true(console_detect_lockup(lines, upto, &old, &kind, msg, sizeof(msg), &stacks));
	assert_string_equal(kind, "deadline");
	assert_string_equal(msg, "no end of test after 1500 s (deadline)");
	struct console_end quiet = {
	    .timed_out = true, .secs = 1920.4, .progress_rule = true, .since_progress_s = 1500.1};
	assert_true(console_detect_lockup(lines, upto, &quiet, &kind, msg, sizeof(msg), &stacks));
	assert_string_equal(kind, "deadline");
	assert_string_equal(msg, "no end of test after 1920 s (deadline: no progress for 1500 s)");
	struct console_end capped = {.timed_out = true,
	                             .secs = 6000.3,
	                             .progress_rule = true,
	                             .capped = true,
	                             .since_progress_s = 312};
	assert_true(console_detect_lockup(lines, upto, &capped, &kind, msg, sizeof(msg), &stacks));
	assert_string_equal(msg, "no end of test after 6000 s (deadline: the boot's cap; last "
	                         "progress 312 s before)");

	struct boot b = {.deadline_s = 1500};
	boot_deadline_say(&b, said, sizeof(said));
	assert_string_equal(said, "limit 1500 s");
	b.progress = console_guest_progress;
	b.cap_s = 6000;
	b.secs = 1650;
	b.longest_wait_s = 420;
	boot_deadline_say(&b, said, sizeof(said));
	assert_string_equal(said, "limit 1500 s without progress (longest wait 420 s), cap 6000 s");
	b.timed_out = true;
	b.ended_by = BOOT_DEADLINE_CAP;
	b.secs = 6000;
	b.last_progress_s = 5688;
	boot_deadline_say(&b, said, sizeof(said));
	assert_string_equal(said, "limit 1500 s without progress (longest wait 420 s), cap 6000 s; "
	                          "ended by the cap, last progress 312 s before");
	b.ended_by = BOOT_DEADLINE_NO_PROGRESS;
	b.secs = 1920;
	b.last_progress_s = 420;
	b.longest_wait_s = 1500;
	boot_deadline_say(&b, said, sizeof(said));
	assert_string_equal(said, "limit 1500 s without progress (longest wait 1500 s), cap 6000 "
	                          "s; ended by no progress for 1500 s");
	strutil_buf_release(&stacks);
	free(lines);
	strutil_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_progress_lines), cmocka_unit_test(test_progress_raw_lines),
	    cmocka_unit_test(test_rule),           cmocka_unit_test(test_replay_real_console),
	    cmocka_unit_test(test_slow_band),      cmocka_unit_test(test_clock_other_ends),
	    cmocka_unit_test(test_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
