/*
 * trackgit.c - git for the tracker (track_internal.h): git run from an argv
 * array by netlib's process runner (procrun.h, the server's one way to start
 * a process), the commit a rev names, and main() of the server started as
 * locklab-ssh (track.h), which execs ssh in its place.
 * What the tracker does with git is track.c.
 */
#include "track.h"
#include "track_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procrun.h"
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
	/* two free places for extra, then the NULL */
	const char *envp[7] = {envpath, envhome, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"};
	struct procrun_cmd c = {
	    .argv = argv,
	    .envp = envp,
	    .out_fd = PROCRUN_CAPTURE,
	    .err_fd = PROCRUN_CAPTURE,
	    .capture_max = TRACK_GIT_MAX,
	    .wall_s = TRACK_GIT_SECONDS,
	    .report_exec = true,
	};
	struct procrun_result r;
	int status = -1;

	snprintf(envpath, sizeof(envpath), "PATH=%s", path ? path : "/usr/bin:/bin");
	snprintf(envhome, sizeof(envhome), "HOME=%s", home ? home : "/");
	for (size_t i = 0; extra && extra[i] && i < 2; i++)
		envp[4 + i] = extra[i];
	if (out)
		*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (procrun(&c, &r, err, errlen))
		goto out;
	status = r.status;
	if (r.timed_out)
		snprintf(err, errlen, "git took more than %d s", TRACK_GIT_SECONDS);
	if (status && err && errlen && !err[0]) {
		const char *line = r.err ? r.err : "";
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
	if (out) {
		*out = r.out;
		r.out = NULL;
	}
out:
	procrun_result_release(&r);
	return status;
}

/* track_git_env without extra variables. */
int track_git(const char *const *argv, char **out, char *err, size_t errlen)
{
	return track_git_env(argv, NULL, out, err, errlen);
}

int track_ssh_main(int argc, char **argv)
{
	return sshpin_main(argc, argv, procrun_replace);
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
