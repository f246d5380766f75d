/*
 * sshpin.h - git's ssh (GIT_SSH) for an ssh:// URL that was checked under
 * the fetch address policy (netpolicy.h): a submitted URL the agent fetches
 * (agents/build.c) and a tracked tree's URL the server fetches
 * (server/track.c).  git runs it with ssh's own arguments, and it runs ssh
 * held to the checked address, so that a name whose answer changes after
 * the check (DNS rebinding) cannot move the connection.
 *
 * It is the program itself under another name: each program links
 * "locklab-ssh" to its own binary in a folder of its own (sshpin_install),
 * and its main() runs sshpin_main when started under that name.  The exec
 * of ssh is the program's own (its one module that starts processes).
 */
#ifndef LOCKLAB_SSHPIN_H
#define LOCKLAB_SSHPIN_H

#include <stdbool.h>
#include <stddef.h>

/* The wrapper's name (its link, and how its lines on stderr start). */
#define SSHPIN_NAME "locklab-ssh"

/* The environment variable that carries the pin: "NAME ADDRESS". */
#define SSHPIN_ENV "LOCKLAB_SSH_PIN"

/* Whether argv0 names the wrapper (its base name is locklab-ssh). */
bool sshpin_invoked(const char *argv0);

/*
 * The wrapper: with SSHPIN_ENV set and the destination's host equal to its
 * NAME, replace (an execvp: returns only when it failed, errno set) runs ssh
 * with HostName=ADDRESS (HostKeyAlias=NAME: the host key is still checked
 * against the name), no proxies, no shared connections, no prompts, then
 * git's own arguments.  Anything else is refused with 255 (ssh's own
 * failure code) and a line on stderr; nothing connects.
 */
int sshpin_main(int argc, char **argv, int (*replace)(const char *const argv[]));

/*
 * Make WORKDIR/bin/locklab-ssh a link to this program (WORKDIR must exist;
 * bin is made); its path in path.  0, or -1 with errno.
 */
int sshpin_install(const char *workdir, char *path, size_t len);

#endif
