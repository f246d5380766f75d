/*
 * test_gitproto.c - the protocol policy given to git fetches (gitproto.h):
 * real git, given the policy, reads a file:// repository only when it is
 * allowed and never runs an ext:: command.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gitproto.h"

extern char **environ;

/* Runs argv (output to /dev/null); the exit status, or -1. */
static int run(const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* git <policy> ls-remote url: the exit status */
static int ls_remote(const char *url, bool allow_file)
{
	const char *argv[1 + GITPROTO_ARGC + 3];
	size_t n = 0;

	argv[n++] = "git";
	n += gitproto_args(argv + n, allow_file);
	argv[n++] = "ls-remote";
	argv[n++] = url;
	argv[n] = NULL;
	return run(argv);
}

static void test_args(void **state)
{
	const char *argv[GITPROTO_ARGC];

	(void)state;
	assert_int_equal(gitproto_args(argv, false), GITPROTO_ARGC);
	assert_string_equal(argv[0], "-c");
	assert_string_equal(argv[1], "protocol.allow=never");
	assert_string_equal(argv[GITPROTO_ARGC - 1], "protocol.file.allow=never");
	assert_int_equal(gitproto_args(argv, true), GITPROTO_ARGC);
	assert_string_equal(argv[GITPROTO_ARGC - 1], "protocol.file.allow=always");
}

static void test_git(void **state)
{
	char dir[] = "/tmp/test_gitproto.XXXXXX", repo[64], url[80], ext[160], mark[80];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(repo, sizeof(repo), "%s/r.git", dir);
	snprintf(url, sizeof(url), "file://%s", repo);
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	snprintf(ext, sizeof(ext), "ext::touch %s", mark);
	{
		const char *init[] = {"git", "init", "--quiet", "--bare", repo, NULL};

		if (run(init) != 0) {
			print_message("# SKIP git cannot make a repository here\n");
			skip();
		}
	}
	assert_int_not_equal(ls_remote(url, false), 0);
	assert_int_equal(ls_remote(url, true), 0);
	assert_int_not_equal(ls_remote(ext, true), 0);
	assert_int_not_equal(access(mark, F_OK), 0);
	{
		const char *rm[] = {"rm", "-rf", dir, NULL};

		assert_int_equal(run(rm), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_args),
	    cmocka_unit_test(test_git),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
