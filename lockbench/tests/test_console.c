/*
 * test_console.c - the console reader (console.h) on captured consoles of
 * real report formats: lockdep (kernel/locking/lockdep.c), might_sleep
 * (kernel/sched/core.c __might_resched), WARN (kernel/panic.c __warn),
 * KASAN (mm/kasan/report.c), UBSAN (lib/ubsan.c), spinlock debugging
 * (kernel/locking/spinlock_debug.c), scheduling while atomic, Oops and
 * general protection faults (arch/x86/kernel/dumpstack.c), hung tasks
 * (kernel/hung_task.c).  The samples follow the 6.1 printk formats, with
 * the console's time stamps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/console.h"

static const char lockdep_circular[] =
    "[   11.902311] LOCKLAB-GUEST kernel=6.1.0 cpus=2\r\n"
    "[   12.345678] \n"
    "[   12.345679] ======================================================\n"
    "[   12.345680] WARNING: possible circular locking dependency detected\n"
    "[   12.345681] 6.1.0 #1 Not tainted\n"
    "[   12.345682] ------------------------------------------------------\n"
    "[   12.345683] lockbench/62 is trying to acquire lock:\n"
    "[   12.345684] ffff88800346c0a8 (&pipe->mutex/1){+.+.}-{3:3}, at: "
    "pipe_write+0x4b/0x6a0\n"
    "[   12.345685] \n"
    "[   12.345686] but task is already holding lock:\n"
    "[   12.345687] ffff888003478c28 (&ep->mtx){+.+.}-{3:3}, at: do_epoll_ctl+0x1d6/0x3e0\n"
    "[   12.345688] \n"
    "[   12.345689] which lock already depends on the new lock.\n"
    "[   12.345690] \n"
    "[   12.345691] the existing dependency chain (in reverse order) is:\n"
    "[   12.345692] \n"
    "[   12.345693] -> #1 (&ep->mtx){+.+.}-{3:3}:\n"
    "[   12.345694]        __mutex_lock+0x9a/0x9e0\n"
    "[   12.345695]        do_epoll_ctl+0x1d6/0x3e0\n"
    "[   12.345696] \n"
    "[   12.345697] -> #0 (&pipe->mutex/1){+.+.}-{3:3}:\n"
    "[   12.345698]        __lock_acquire+0x1163/0x1ee0\n"
    "[   12.345699]        lock_acquire+0xc2/0x2c0\n"
    "[   12.345700] \n"
    "[   12.345701] other info that might help us debug this:\n"
    "[   12.345702] \n"
    "[   12.345703]  Possible unsafe locking scenario:\n"
    "[   12.345704] \n"
    "[   12.345705]        CPU0                    CPU1\n"
    "[   12.345706]        ----                    ----\n"
    "[   12.345707]   lock(&ep->mtx);\n"
    "[   12.345708]                                lock(&pipe->mutex/1);\n"
    "[   12.345709]                                lock(&ep->mtx);\n"
    "[   12.345710]   lock(&pipe->mutex/1);\n"
    "[   12.345711] \n"
    "[   12.345712]  *** DEADLOCK ***\n"
    "[   12.345713] \n"
    "[   12.345714] 1 lock held by lockbench/62:\n"
    "[   12.345715]  #0: ffff888003478c28 (&ep->mtx){+.+.}-{3:3}, at: "
    "do_epoll_ctl+0x1d6/0x3e0\n"
    "[   12.345716] \n"
    "[   12.345717] stack backtrace:\n"
    "[   12.345718] CPU: 1 PID: 62 Comm: lockbench Not tainted 6.1.0 #1\n"
    "[   12.345719] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS "
    "1.16.2-debian-1.16.2-1 04/01/2014\n"
    "[   12.345720] Call Trace:\n"
    "[   12.345721]  <TASK>\n"
    "[   12.345722]  dump_stack_lvl+0x45/0x5e\n"
    "[   12.345723]  check_noncircular+0x10e/0x130\n"
    "[   12.345724]  __lock_acquire+0x1163/0x1ee0\n"
    "[   12.345725]  lock_acquire+0xc2/0x2c0\n"
    "[   12.345726]  __mutex_lock+0x9a/0x9e0\n"
    "[   12.345727]  pipe_write+0x4b/0x6a0\n"
    "[   12.345728]  vfs_write+0x2a6/0x3d0\n"
    "[   12.345729]  ksys_write+0x5f/0xe0\n"
    "[   12.345730]  do_syscall_64+0x3a/0x90\n"
    "[   12.345731]  entry_SYSCALL_64_after_hwframe+0x63/0xcd\n"
    "[   12.345732]  </TASK>\n"
    "[   13.100000] LOCKLAB-JSON-BEGIN ttyS1\n"
    "[   19.100000] LOCKLAB-JSON-END rc=0\n"
    "[   19.100001] LOCKLAB-END\n"
    "[   19.200000] reboot: Power down\n";

static const char might_sleep[] =
    "[    3.001000] BUG: sleeping function called from invalid context at "
    "kernel/locking/mutex.c:580\n"
    "[    3.001001] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 57, name: "
    "lockbench\n"
    "[    3.001002] preempt_count: 1, expected: 0\n"
    "[    3.001003] RCU nest depth: 0, expected: 0\n"
    "[    3.001004] 1 lock held by lockbench/57:\n"
    "[    3.001005]  #0: ffff888003a0c0d0 (&pipe->rd_wait){....}-{2:2}, at: "
    "pipe_read+0x3c/0x450\n"
    "[    3.001006] Preemption disabled at:\n"
    "[    3.001007] [<ffffffff811b3c4e>] pipe_read+0x3c/0x450\n"
    "[    3.001008] CPU: 0 PID: 57 Comm: lockbench Not tainted 6.1.0 #1\n"
    "[    3.001009] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)\n"
    "[    3.001010] Call Trace:\n"
    "[    3.001011]  <TASK>\n"
    "[    3.001012]  dump_stack_lvl+0x45/0x5e\n"
    "[    3.001013]  __might_resched.cold+0xcc/0xdd\n"
    "[    3.001014]  __mutex_lock+0x4d/0x9e0\n"
    "[    3.001015]  pipe_read+0x51/0x450\n"
    "[    3.001016]  </TASK>\n"
    "[    3.002000] BUG: sleeping function called from invalid context at "
    "kernel/locking/mutex.c:580\n"
    "[    3.002001] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 58, name: "
    "lockbench\n"
    "[    3.002002] Call Trace:\n"
    "[    3.002003]  <TASK>\n"
    "[    3.002004]  </TASK>\n"
    "[    4.000000] ------------[ cut here ]------------\n"
    "[    4.000001] DEBUG_LOCKS_WARN_ON(lock->magic != lock)\n"
    "[    4.000002] WARNING: CPU: 1 PID: 57 at kernel/locking/mutex.c:582 "
    "__mutex_lock+0x6f5/0xa00\n"
    "[    4.000003] Modules linked in:\n"
    "[    4.000004] CPU: 1 PID: 57 Comm: lockbench Not tainted 6.1.0 #1\n"
    "[    4.000005] RIP: 0010:__mutex_lock+0x6f5/0xa00\n"
    "[    4.000006] Call Trace:\n"
    "[    4.000007]  <TASK>\n"
    "[    4.000008]  pipe_read+0x3c/0x450\n"
    "[    4.000009]  </TASK>\n"
    "[    4.000010] irq event stamp: 1234\n"
    "[    4.000011] ---[ end trace 0000000000000000 ]---\n";

static const char oops[] =
    "[    5.000000] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
    "[    5.000001] #PF: supervisor read access in kernel mode\n"
    "[    5.000002] #PF: error_code(0x0000) - not-present page\n"
    "[    5.000003] PGD 0 P4D 0 \n"
    "[    5.000004] Oops: 0000 [#1] PREEMPT SMP\n"
    "[    5.000005] CPU: 1 PID: 66 Comm: lockbench Not tainted 6.1.0 #1\n"
    "[    5.000006] RIP: 0010:__mutex_unlock_slowpath+0x3a/0x2a0\n"
    "[    5.000007] Call Trace:\n"
    "[    5.000008]  <TASK>\n"
    "[    5.000009]  pipe_release+0x2f/0xd0\n"
    "[    5.000010]  </TASK>\n"
    "[    5.000011] ---[ end trace 0000000000000000 ]---\n";

struct key_case {
	const char *line;
	const char *key; /* NULL: not a report */
};

static void test_keys(void **state)
{
	static const struct key_case cases[] = {
	    {"WARNING: possible circular locking dependency detected",
	     "WARNING:possible_circular_locking_dependency_detected"},
	    {"WARNING: possible recursive locking detected",
	     "WARNING:possible_recursive_locking_detected"},
	    {"INFO: possible recursive locking detected",
	     "INFO:possible_recursive_locking_detected"},
	    {"WARNING: bad unlock balance detected!", "WARNING:bad_unlock_balance_detected"},
	    {"WARNING: suspicious RCU usage", "WARNING:suspicious_RCU_usage"},
	    {"WARNING: CPU: 1 PID: 57 at kernel/locking/mutex.c:582 __mutex_lock+0x6f5/0xa00",
	     "WARNING:at_kernel/locking/mutex.c:#__mutex_lock"},
	    {"WARNING: CPU: 0 PID: 1 at lib/foo.c:12 foo_bar+0x1/0x2 [foo]",
	     "WARNING:at_lib/foo.c:#foo_bar"},
	    {"BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580",
	     "BUG:sleeping_function_called_from_invalid_context_at_kernel/locking/mutex.c"},
	    {"BUG: scheduling while atomic: lockbench/64/0x00000002",
	     "BUG:scheduling_while_atomic"},
	    {"BUG: spinlock recursion on CPU#0, lockbench/65", "BUG:spinlock_recursion_on_CPU"},
	    {"BUG: spinlock bad magic on CPU#1, swapper/0/1", "BUG:spinlock_bad_magic_on_CPU"},
	    {"BUG: KASAN: slab-out-of-bounds in pipe_write+0x5d2/0x6a0",
	     "BUG:KASAN:slab-out-of-bounds_in_pipe_write"},
	    {"BUG: KASAN: use-after-free in __mutex_lock+0x1f/0x9e0",
	     "BUG:KASAN:use-after-free_in__mutex_lock"},
	    {"UBSAN: shift-out-of-bounds in kernel/locking/lockdep.c:1234:5",
	     "UBSAN:shift-out-of-bounds_in_kernel/locking/lockdep.c"},
	    {"BUG: kernel NULL pointer dereference, address: 0000000000000008",
	     "BUG:kernel_NULL_pointer_dereference"},
	    {"BUG: unable to handle page fault for address: ffffc90000a3f000",
	     "BUG:unable_to_handle_page_fault_for_address"},
	    {"Oops: 0000 [#1] PREEMPT SMP", "Oops"},
	    {"general protection fault, probably for non-canonical address 0xdead000000000122: "
	     "0000 [#1] PREEMPT SMP NOPTI",
	     "general_protection_fault"},
	    {"kernel BUG at kernel/locking/mutex.c:123!", "kernel_BUG_at_kernel/locking/mutex.c"},
	    {"INFO: task lockbench:68 blocked for more than 3 seconds.",
	     "INFO:task_blocked_for_more_than#seconds"},
	    {"BUG: soft lockup - CPU#0 stuck for 22s! [lockbench:70]",
	     "BUG:soft_lockup-CPU##stuck_for#s"},
	    {"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
	     "INFO:rcu_preempt_detected_stalls_on_CPUs/tasks"},
	    {"BUG: using smp_processor_id() in preemptible [00000000] code: lockbench/71",
	     "BUG:using_smp_processor_id()in_preemptible"},
	    {"Kernel panic - not syncing: hung_task: blocked tasks",
	     "Kernel_panic-not_syncing:hung_task:blocked_tasks"},
	    /* not reports */
	    {"Run /init as init process", NULL},
	    {"lock-torture: Writes:  Total: 97  Max/Min: 49/48   Fail: 0", NULL},
	    {"INFO: lockdep is turned off.", NULL},
	    {"Oopsie", NULL},
	    {"LOCKLAB-GUEST kernel=6.1.0 cpus=2", NULL},
	};
	char key[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool found = console_splat_key(cases[i].line, key, sizeof(key));
		if (!cases[i].key) {
			if (found)
				fail_msg("'%s' gave key '%s'", cases[i].line, key);
			continue;
		}
		if (!found)
			fail_msg("'%s' is not read as a report", cases[i].line);
		if (strcmp(key, cases[i].key))
			fail_msg("'%s'\n  gave     %s\n  expected %s", cases[i].line, key,
			         cases[i].key);
	}
}

/* The console's lines, from a copy the caller frees with free_lines. */
static char **lines_of(const char *text, size_t *n, char **copy)
{
	*copy = strdup(text);
	return console_lines(*copy, n);
}

static void test_lockdep_report(void **state)
{
	char *copy;
	size_t n;
	char **lines = lines_of(lockdep_circular, &n, &copy);
	struct console_splats s = {0};

	assert_string_equal(lines[0], "LOCKLAB-GUEST kernel=6.1.0 cpus=2");
	assert_int_equal(console_find_splats(lines, n, &s), 1);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.v[0].key, "WARNING:possible_circular_locking_dependency_detected");
	assert_string_equal(s.v[0].message,
	                    "WARNING: possible circular locking dependency detected");
	/* the report's words and its call trace, through </TASK> and no further */
	assert_non_null(strstr(s.v[0].lines, "lockbench/62 is trying to acquire lock:"));
	assert_non_null(strstr(s.v[0].lines, "*** DEADLOCK ***"));
	assert_non_null(strstr(s.v[0].lines, "Call Trace:\n <TASK>\n dump_stack_lvl+0x45/0x5e\n"));
	assert_non_null(strstr(s.v[0].lines, " pipe_write+0x4b/0x6a0\n"));
	const char *end = strstr(s.v[0].lines, " </TASK>\n");
	assert_non_null(end);
	assert_string_equal(end, " </TASK>\n");
	assert_null(strstr(s.v[0].lines, "LOCKLAB"));

	/* a lockdep report is no lockup: the kernel goes on and the boot ended */
	struct console_end fin = {.ended = true, .timed_out = false, .secs = 19.2};
	const char *kind;
	char msg[256];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	assert_false(console_detect_lockup(lines, n, &fin, &kind, msg, sizeof(msg), &stacks));
	strutil_buf_release(&stacks);
	console_splats_release(&s);
	free(lines);
	free(copy);
}

static void test_might_sleep_and_warn(void **state)
{
	char *copy;
	size_t n;
	char **lines = lines_of(might_sleep, &n, &copy);
	struct console_splats s = {0};

	/* the second might_sleep report has the same key: one finding */
	assert_int_equal(console_find_splats(lines, n, &s), 2);
	assert_string_equal(
	    s.v[0].key,
	    "BUG:sleeping_function_called_from_invalid_context_at_kernel/locking/mutex.c");
	assert_string_equal(s.v[0].message, "BUG: sleeping function called from invalid context at "
	                                    "kernel/locking/mutex.c:580");
	assert_non_null(strstr(s.v[0].lines, "in_atomic(): 1, irqs_disabled(): 0"));
	assert_non_null(strstr(s.v[0].lines, "__might_resched.cold+0xcc/0xdd"));
	assert_null(strstr(s.v[0].lines, "pid: 58")); /* the repeat is not in the first's lines */
	assert_string_equal(s.v[1].key, "WARNING:at_kernel/locking/mutex.c:#__mutex_lock");
	assert_non_null(strstr(s.v[1].lines, "RIP: 0010:__mutex_lock+0x6f5/0xa00"));

	/* "BUG: sleeping function ..." is a splat, not an oops */
	assert_null(console_lockup_kind(s.v[0].message));
	struct console_end fin = {.ended = true, .timed_out = false, .secs = 4.1};
	const char *kind;
	char msg[256];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	assert_false(console_detect_lockup(lines, n, &fin, &kind, msg, sizeof(msg), &stacks));

	/* a second read of the same console adds nothing new */
	assert_int_equal(console_find_splats(lines, n, &s), 0);
	assert_int_equal(s.n, 2);
	strutil_buf_release(&stacks);
	console_splats_release(&s);
	free(lines);
	free(copy);
}

static void test_oops(void **state)
{
	char *copy;
	size_t n;
	char **lines = lines_of(oops, &n, &copy);
	struct console_splats s = {0};

	assert_int_equal(console_find_splats(lines, n, &s), 2);
	assert_string_equal(s.v[0].key, "BUG:kernel_NULL_pointer_dereference");
	assert_non_null(strstr(s.v[0].lines, "#PF: supervisor read access in kernel mode"));
	assert_string_equal(s.v[1].key, "Oops");
	assert_non_null(strstr(s.v[1].lines, "RIP: 0010:__mutex_unlock_slowpath+0x3a/0x2a0"));

	/* an Oops kills the task with whatever it held: a lockup, from its first line */
	struct console_end fin = {.ended = false, .timed_out = false, .secs = 9};
	const char *kind;
	char msg[256];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	assert_true(console_detect_lockup(lines, n, &fin, &kind, msg, sizeof(msg), &stacks));
	assert_string_equal(kind, "oops");
	assert_string_equal(msg, "BUG: kernel NULL pointer dereference, address: 0000000000000008");
	strutil_buf_release(&stacks);
	console_splats_release(&s);
	free(lines);
	free(copy);
}

static void test_lockup_kinds(void **state)
{
	assert_string_equal(
	    console_lockup_kind("INFO: task lockbench:68 blocked for more than 3 seconds."),
	    "hung-task");
	assert_string_equal(console_lockup_kind("BUG: soft lockup - CPU#0 stuck for 22s! [x:1]"),
	                    "soft-lockup");
	assert_string_equal(
	    console_lockup_kind("rcu: INFO: rcu_preempt self-detected stall on CPU"), "rcu-stall");
	assert_string_equal(console_lockup_kind("Kernel panic - not syncing: Fatal exception"),
	                    "panic");
	assert_string_equal(console_lockup_kind("general protection fault, probably for "
	                                        "non-canonical address 0xdead: 0000 [#1]"),
	                    "oops");
	assert_null(console_lockup_kind("BUG: scheduling while atomic: lockbench/64/0x00000002"));
	assert_null(console_lockup_kind("BUG: spinlock recursion on CPU#0, lockbench/65"));
	assert_null(
	    console_lockup_kind("BUG: KASAN: slab-out-of-bounds in pipe_write+0x5d2/0x6a0"));
	assert_null(console_lockup_kind("WARNING: possible circular locking dependency detected"));
	assert_true(console_torture_failed("Writes:  Total: 9  Max/Min: 5/4 !!!  Fail: 0"));
	assert_true(console_torture_failed("Writes:  Total: 9  Max/Min: 5/4   Fail: 2"));
	assert_false(console_torture_failed("Writes:  Total: 9  Max/Min: 5/4   Fail: 0"));
}

static void test_clean_console(void **state)
{
	static const char clean[] =
	    "[    0.000000] Linux version 6.1.0 (root@host) #1 SMP PREEMPT\n"
	    "[    0.512000] Run /init as init process\n"
	    "[    0.600000] LOCKLAB-GUEST kernel=6.1.0 cpus=2\n"
	    "[    8.000000] lock-torture: Writes:  Total: 97  Max/Min: 49/48   Fail: 0\n"
	    "[    8.000001] lock-torture:--- End of test: SUCCESS: nwriters_stress=2\n"
	    "[    8.100000] reboot: Power down\n";
	char *copy;
	size_t n;
	char **lines = lines_of(clean, &n, &copy);
	struct console_splats s = {0};
	assert_int_equal(console_find_splats(lines, n, &s), 0);
	assert_int_equal(s.n, 0);
	console_splats_release(&s);
	free(lines);
	free(copy);
}

/* The guest init's memory lines: the least MemAvailable and MemTotal. */
static void test_guest_memory(void **state)
{
	static const char text[] = "LOCKLAB-MEM available_kb=1400000 total_kb=1480000\n"
	                           "pipe-mutex kernel users=2000\n"
	                           "LOCKLAB-MEM available_kb=640000 total_kb=1480000\n"
	                           "LOCKLAB-MEM available_kb=9x total_kb=1480000\n"
	                           "[  300.1] LOCKLAB-MEM available_kb=700000 total_kb=1480000\n";
	char *copy;
	size_t n;
	char **lines = lines_of(text, &n, &copy);
	long avail = -1, total = -1;
	assert_int_equal(console_guest_memory(lines, n, &avail, &total), 3);
	assert_int_equal(avail, 640000);
	assert_int_equal(total, 1480000);
	avail = total = -1;
	assert_int_equal(console_guest_memory(lines + 1, 1, &avail, &total), 0);
	assert_int_equal(avail, -1);
	free(lines);
	free(copy);
}

/*
 * A locktorture boot's deadline follows the kernel's console: its boot
 * messages and locktorture's stats lines are progress; the guest init's
 * timer (LOCKLAB-MEM) and blank lines are not.
 */
static void test_torture_progress(void **state)
{
	(void)state;
	assert_true(console_torture_progress("[    1.204411] Run /init as init process\r"));
	assert_true(console_torture_progress(
	    "[   12.001337] Writes:  Total: 91238  Max/Min: 0/0   Fail: 0"));
	assert_false(console_torture_progress("[   20.000101] LOCKLAB-MEM free_kb=401234"));
	assert_false(console_torture_progress("LOCKLAB-MEM free_kb=401234"));
	assert_false(console_torture_progress("[   20.000101] \r"));
	assert_false(console_torture_progress(""));
}

/* A boot the deadline ended is booted again only when no detector spoke. */
static void test_silent_deadline(void **state)
{
	char *quiet[] = {"[    1.2] Run /init as init process",
	                 "[   12.0] Writes:  Total: 91238  Max/Min: 0/0   Fail: 0"};
	char *hung[] = {"[    1.2] Run /init as init process",
	                "[    9.1] INFO: task lock_torture_wr:97 blocked for more than 3 seconds."};
	char *failed[] = {"[   12.0] Writes:  Total: 91238  Max/Min: 0/0   Fail: 3 !!!"};
	(void)state;
	assert_true(console_silent_deadline(quiet, 2, false, true));
	assert_true(console_silent_deadline(NULL, 0, false, true));
	assert_false(console_silent_deadline(hung, 2, false, true));
	assert_false(console_silent_deadline(failed, 1, false, true));
	/* ended, or stopped without the deadline (a crash): not a silent deadline */
	assert_false(console_silent_deadline(quiet, 2, true, false));
	assert_false(console_silent_deadline(quiet, 2, false, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_lockdep_report),
	    cmocka_unit_test(test_might_sleep_and_warn),
	    cmocka_unit_test(test_oops),
	    cmocka_unit_test(test_lockup_kinds),
	    cmocka_unit_test(test_clean_console),
	    cmocka_unit_test(test_guest_memory),
	    cmocka_unit_test(test_torture_progress),
	    cmocka_unit_test(test_silent_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
