/*
 * test_lockstep.c - the turns two sides take through a shared file
 * (lockstep.h: lockstep_take_turns, the one loop both stepped workloads
 * use) and the bounded wait hot's coordinator parks its workers with
 * (util.h: lb_wait_reaches).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/lockstep.h"
#include "../src/util.h"

/* A word nobody moves: the wait ends at its bound, saying where the word stood. */
static void test_wait_reaches_bounded(void **state)
{
	_Atomic int word = 1;
	int last = -1;
	uint64_t t0 = lb_now_ns();

	assert_int_equal(lb_wait_reaches(&word, 3, 50, &last), -1);
	assert_true(lb_now_ns() - t0 >= 50000000u);
	assert_int_equal(last, 1);
	/* a word already there: no wait */
	word = 3;
	assert_int_equal(lb_wait_reaches(&word, 3, 0, NULL), 0);
}

struct bumper {
	_Atomic int *word;
	int times;
};

/* A worker parking: one more on the word each time, and a wake. */
static void *bump(void *arg)
{
	struct bumper *b = arg;

	for (int i = 0; i < b->times; i++) {
		usleep(2000);
		atomic_fetch_add(b->word, 1);
		lb_futex_wake(b->word, 1);
	}
	return NULL;
}

static void test_wait_reaches_woken(void **state)
{
	_Atomic int word = 0;
	struct bumper b = {&word, 4};
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, bump, &b), 0);
	assert_int_equal(lb_wait_reaches(&word, 4, LOCKSTEP_WAIT_MS, NULL), 0);
	assert_true(atomic_load(&word) >= 4);
	pthread_join(t, NULL);
}

/* Turns taken: each slice writes its side into a log both processes see. */
struct turn_log {
	_Atomic int n;
	int side[64];
};

struct slicer {
	struct turn_log *log;
	int side;
	int fail_at; /* the slice that fails (0: none) */
	int calls;
};

static int log_slice(void *arg, uint64_t t0, char *err, size_t errlen)
{
	struct slicer *s = arg;

	if (++s->calls == s->fail_at) {
		snprintf(err, errlen, "slice %d failed", s->calls);
		return -1;
	}
	int k = atomic_fetch_add(&s->log->n, 1);
	if (k < 64)
		s->log->side[k] = s->side;
	return 0;
}

static struct turn_log *log_new(void)
{
	struct turn_log *log =
	    mmap(NULL, sizeof(*log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(log != MAP_FAILED);
	memset(log, 0, sizeof(*log));
	return log;
}

static void turn_file(char *path, size_t len)
{
	snprintf(path, len, "/tmp/lockbench-test-lockstep-%d", (int)getpid());
	unlink(path);
}

/* Without a lockstep, the slices run back to back: n of them, at least one. */
static void test_take_turns_alone(void **state)
{
	struct turn_log *log = log_new();
	struct slicer s = {.log = log};
	char err[128] = "";
	uint64_t waited = 1;

	assert_int_equal(
	    lockstep_take_turns(NULL, 5, NULL, log_slice, &s, &waited, err, sizeof(err)), 0);
	assert_int_equal(atomic_load(&log->n), 5);
	assert_true(waited < 1000000000u);
	assert_int_equal(lockstep_take_turns(NULL, 0, NULL, log_slice, &s, NULL, err, sizeof(err)),
	                 0);
	assert_int_equal(atomic_load(&log->n), 6);
	munmap(log, sizeof(*log));
}

/* Two processes, 10 turns each: side 0 first, then strictly one after the other. */
static void test_take_turns_two_sides(void **state)
{
	struct turn_log *log = log_new();
	char path[96], err[128] = "";
	int status;

	turn_file(path, sizeof(path));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct lockstep *ls = lockstep_open(path, 1, err, sizeof(err));
		struct slicer s = {.log = log, .side = 1};
		long alone = -1;
		int rc =
		    !ls || lockstep_take_turns(ls, 10, NULL, log_slice, &s, NULL, err, sizeof(err));
		if (ls && (lockstep_turns(ls, &alone) != 10 || alone != 0))
			rc = 1;
		if (ls)
			lockstep_done(ls);
		lockstep_close(ls);
		_exit(rc);
	}
	struct lockstep *ls = lockstep_open(path, 0, err, sizeof(err));
	assert_non_null(ls);
	struct slicer s = {.log = log, .side = 0};
	uint64_t waited = 0;
	assert_int_equal(
	    lockstep_take_turns(ls, 10, NULL, log_slice, &s, &waited, err, sizeof(err)), 0);
	long alone = -1;
	assert_int_equal(lockstep_turns(ls, &alone), 10);
	assert_int_equal(alone, 0);
	lockstep_done(ls);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(atomic_load(&log->n), 20);
	for (int k = 0; k < 20; k++)
		assert_int_equal(log->side[k], k % 2);
	lockstep_close(ls);
	unlink(path);
	munmap(log, sizeof(*log));
}

/*
 * A slice that fails ends the turns with its error, and the side takes no
 * more: its next wait fails at once, saying why, and the turn stays its own
 * (the other side's wait times out rather than running a different point).
 */
static void test_take_turns_slice_fails(void **state)
{
	struct turn_log *log = log_new();
	char path[96], err[128] = "";

	turn_file(path, sizeof(path));
	struct lockstep *ls = lockstep_open(path, 0, err, sizeof(err));
	assert_non_null(ls);
	struct slicer s = {.log = log, .side = 0, .fail_at = 1};
	assert_int_equal(lockstep_take_turns(ls, 10, NULL, log_slice, &s, NULL, err, sizeof(err)),
	                 -1);
	assert_string_equal(err, "slice 1 failed");
	assert_int_equal(atomic_load(&log->n), 0);
	uint64_t t0 = lb_now_ns();
	assert_int_equal(lockstep_wait(ls, NULL, err, sizeof(err)), -1);
	assert_true(lb_now_ns() - t0 < (uint64_t)LOCKSTEP_WAIT_MS * 1000000);
	assert_string_equal(err, "lockstep: this side takes no more turns after a turn failed");
	/* the turn was not passed: it is still side 0's (a fresh side 0 gets it at once) */
	struct lockstep *again = lockstep_open(path, 0, err, sizeof(err));
	assert_non_null(again);
	assert_int_equal(lockstep_wait(again, NULL, err, sizeof(err)), 0);
	lockstep_close(again);
	lockstep_close(ls);
	unlink(path);
	munmap(log, sizeof(*log));
}

/* A hot point's turn: 1 ms up to 2 threads a CPU, then 1 ms a thread per CPU, at most 8 ms. */
static void test_hot_slice(void **state)
{
	(void)state;
	assert_int_equal(lockstep_hot_slice_us(2, 2), 1000);
	assert_int_equal(lockstep_hot_slice_us(4, 2), 1000);
	assert_int_equal(lockstep_hot_slice_us(5, 2), 2500);
	assert_int_equal(lockstep_hot_slice_us(8, 2), 4000);
	assert_int_equal(lockstep_hot_slice_us(16, 2), 8000);
	assert_int_equal(lockstep_hot_slice_us(64, 2), 8000);
	assert_int_equal(lockstep_hot_slice_us(4, 1), 4000);
	assert_int_equal(lockstep_hot_slice_us(8, 8), 1000);
	/* no CPUs known (the affinity could not be read): the plain turn */
	assert_int_equal(lockstep_hot_slice_us(8, 0), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wait_reaches_bounded),
	    cmocka_unit_test(test_wait_reaches_woken),
	    cmocka_unit_test(test_take_turns_alone),
	    cmocka_unit_test(test_take_turns_two_sides),
	    cmocka_unit_test(test_take_turns_slice_fails),
	    cmocka_unit_test(test_hot_slice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
