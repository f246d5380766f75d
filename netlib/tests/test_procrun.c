/*
 * test_procrun.c - the process runner (procrun.h): stdout and stderr
 * captured apart and cut at the cap, the exit status and a signal's, the
 * deadline, an exec that fails told either way, the caller's environment
 * only, a process group killed whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "procrun.h"

static const char *env_path[] = {"PATH=/usr/bin:/bin", NULL};

static int run_sh(const char *script, struct procrun_cmd *c, struct procrun_result *r)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	char err[256];

	c->argv = argv;
	if (!c->envp)
		c->envp = env_path;
	return procrun(c, r, err, sizeof(err));
}

static void test_capture(void **state)
{
	struct procrun_cmd c = {.out_fd = PROCRUN_CAPTURE, .err_fd = PROCRUN_CAPTURE};
	struct procrun_result r;

	assert_int_equal(run_sh("echo out; echo err >&2; exit 3", &c, &r), 0);
	assert_int_equal(r.status, 3);
	assert_false(r.timed_out);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "err\n");
	procrun_result_release(&r);

	c.capture_max = 10;
	assert_int_equal(run_sh("seq 1 1000", &c, &r), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, 10);
	assert_string_equal(r.out, "1\n2\n3\n4\n5\n");
	assert_true(r.out_truncated);
	assert_false(r.err_truncated);
	procrun_result_release(&r);
}

static void test_env_and_signal(void **state)
{
	const char *env[] = {"PATH=/usr/bin:/bin", "ONLY=this", NULL};
	struct procrun_cmd c = {.out_fd = PROCRUN_CAPTURE, .err_fd = 2, .envp = env};
	struct procrun_result r;

	assert_int_equal(run_sh("env | grep -v '^PWD=' | sort", &c, &r), 0);
	assert_string_equal(r.out, "ONLY=this\nPATH=/usr/bin:/bin\n");
	assert_null(r.err);
	procrun_result_release(&r);

	c.envp = NULL;
	assert_int_equal(run_sh("kill -TERM $$", &c, &r), 0);
	assert_int_equal(r.status, 128 + 15);
	procrun_result_release(&r);
}

static void test_deadline(void **state)
{
	/* the group: the sleep left behind is killed with the shell */
	struct procrun_cmd c = {.out_fd = PROCRUN_CAPTURE,
	                        .err_fd = 2,
	                        .wall_s = 1,
	                        .own_group = true,
	                        .linger_ms = 5000};
	struct procrun_result r;

	assert_int_equal(run_sh("echo started; sleep 30 & sleep 30", &c, &r), 0);
	assert_true(r.timed_out);
	assert_int_equal(r.status, 128 + 9);
	assert_string_equal(r.out, "started\n");
	assert_true(r.wall_s < 10);
	procrun_result_release(&r);
}

static void test_exec_fails(void **state)
{
	const char *argv[] = {"locklab-no-such-program", NULL};
	struct procrun_cmd c = {
	    .argv = argv, .envp = env_path, .out_fd = 2, .err_fd = PROCRUN_CAPTURE};
	struct procrun_result r;
	char err[256] = "";

	/* the child's exit 127, the reason on its stderr */
	assert_int_equal(procrun(&c, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, 127);
	assert_non_null(strstr(r.err, "locklab-no-such-program"));
	procrun_result_release(&r);
	/* or procrun's -1 */
	c.report_exec = true;
	assert_int_equal(procrun(&c, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot run locklab-no-such-program: No such file or directory");
	procrun_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture),
	    cmocka_unit_test(test_env_and_signal),
	    cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_exec_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
