/*
 * trackgit.c - git for the tracker (track_internal.h): git run from an argv
 * array under the tracker's own small posix_spawn runner (the server's one
 * place that starts a process), the commit a rev names, and main() of the
 * server started as locklab-ssh (track.h), which execs ssh in its place.
 * What the tracker does with git is track.c.
 */
#include "track.h"
#include "track_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sshpin.h"
#include "strutil.h"

#define TRACK_GIT_SECONDS 300
#define TRACK_GIT_MAX     (8 << 20)

/* ---- git, from argv ------------------------------------------------------ */

/*
 * Run git with argv (argv[0] is "git"), stdin from /dev/null, stdout
 * captured (up to TRACK_GIT_MAX) into *out (new, NUL-terminated, free(); may be
 * NULL), stderr into err (its first line; when that is the ssh wrapper's
 * saying where it held ssh, ssh's lines after it too, up to git's
 * "fatal:").  A cleared environment but PATH and HOME and the entries of
 * extra (NULL-terminated, at most 2; may be NULL); killed after
 * TRACK_GIT_SECONDS.  Returns the exit status, or -1 when it could not run.
 */
int track_git_env(const char *const *argv, const char *const *extra, char **out, char *err,
                  size_t errlen)
{
	const char *path = getenv("PATH"), *home = getenv("HOME");
	char envpath[4096], envhome[1024];
	char *envp[] = {envpath, envhome, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", NULL, NULL, NULL};
	posix_spawn_file_actions_t fa;
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, status = -1, rc;
	struct strutil_buf o = STRUTIL_BUF_INIT, e = STRUTIL_BUF_INIT;
	time_t deadline = time(NULL) + TRACK_GIT_SECONDS;
	pid_t pid = -1;
	bool exited = false;

	snprintf(envpath, sizeof(envpath), "PATH=%s", path ? path : "/usr/bin:/bin");
	snprintf(envhome, sizeof(envhome), "HOME=%s", home ? home : "/");
	for (size_t i = 0; extra && extra[i] && i < 2; i++)
		envp[4 + i] = (char *)extra[i];
	if (out)
		*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	rc = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	if (rc) {
		snprintf(err, errlen, "cannot run git: %s", strerror(rc));
		pid = -1;
		goto out;
	}
	{
		struct pollfd p[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
		int open_fds = 2;

		/* until both pipes close, or the child is gone and they are drained (a
		 * process it left behind may hold them) */
		while (open_fds > 0) {
			int n = poll(p, 2, exited ? 0 : 200), i;

			if (n == 0 && exited)
				break;
			if (!exited && waitpid(pid, &status, WNOHANG) == pid)
				exited = true;

			if (time(NULL) > deadline) {
				kill(pid, SIGKILL);
				snprintf(err, errlen, "git took more than %d s", TRACK_GIT_SECONDS);
				break;
			}
			if (n < 0 && errno != EINTR)
				break;
			for (i = 0; i < 2 && n > 0; i++) {
				char buf[4096];
				ssize_t got;
				struct strutil_buf *to = i == 0 ? &o : &e;

				if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
					continue;
				got = read(p[i].fd, buf, sizeof(buf));
				if (got <= 0) {
					p[i].fd = -1;
					open_fds--;
				} else if (to->len < TRACK_GIT_MAX) {
					strutil_buf_addlen(to, buf, (size_t)got);
				}
			}
		}
	}
	while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (status && err && errlen && !err[0]) {
		const char *line = strutil_buf_str(&e);
		bool held = !strncmp(line, SSHPIN_NAME ": ", strlen(SSHPIN_NAME ": "));
		size_t used = 0;

		/* the first line; after the ssh wrapper's, ssh's own up to git's "fatal:" */
		do {
			int len = (int)strcspn(line, "\n");

			if (used && (!len || !strncmp(line, "fatal: ", 7)))
				break;
			used += (size_t)snprintf(err + used, errlen - used, "%s%.*s",
			                         used ? "; " : "", len, line);
			line += len + (line[len] ? 1 : 0);
		} while (held && *line && used < errlen);
	}
	if (out)
		*out = strutil_buf_detach(&o);
out:
	if (outp[0] >= 0)
		close(outp[0]);
	if (errp[0] >= 0)
		close(errp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	strutil_buf_release(&o);
	strutil_buf_release(&e);
	return status;
}

/* track_git_env without extra variables. */
int track_git(const char *const *argv, char **out, char *err, size_t errlen)
{
	return track_git_env(argv, NULL, out, err, errlen);
}

/* For sshpin_main: ssh in place of this process (a locklab-ssh started by git). */
static int track_replace(const char *const argv[])
{
	execvp(argv[0], (char *const *)argv);
	return -1;
}

int track_ssh_main(int argc, char **argv)
{
	return sshpin_main(argc, argv, track_replace);
}

/* The commit rev names in the mirror, hex into sha (41 bytes); 0 or -1. */
int track_rev(const char *mirror, const char *rev, char *sha)
{
	char spec[512], *out = NULL, err[256];
	const char *argv[] = {
	    "git", "-C", mirror, "rev-parse", "--verify", "--quiet", "--end-of-options",
	    spec,  NULL};
	int rc;

	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	rc = track_git(argv, &out, err, sizeof(err));
	if (rc == 0 && out && strlen(out) >= 40) {
		memcpy(sha, out, 40);
		sha[40] = '\0';
	} else {
		rc = -1;
	}
	free(out);
	return rc ? -1 : 0;
}
