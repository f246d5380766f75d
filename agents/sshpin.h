/*
 * sshpin.h - the agent's ssh for git (GIT_SSH) on an ssh:// URL from a
 * submission: git runs it with ssh's own arguments, and it runs ssh held to
 * the address the agent's net policy checked (netpolicy.h), so that a name
 * whose answer changes after the check (DNS rebinding) cannot move the
 * connection.  The same binary as the agent: main() runs sshpin_main when
 * it was started as "locklab-ssh", a link the agent makes in its workdir.
 */
#ifndef LOCKLAB_SSHPIN_H
#define LOCKLAB_SSHPIN_H

#include <stdbool.h>
#include <stddef.h>

/* The environment variable that carries the pin: "NAME ADDRESS". */
#define SSHPIN_ENV "LOCKLAB_SSH_PIN"

/* Whether argv0 names the wrapper (its base name is locklab-ssh). */
bool sshpin_invoked(const char *argv0);

/*
 * The wrapper: with SSHPIN_ENV set and the destination's host equal to its
 * NAME, exec ssh with HostName=ADDRESS (HostKeyAlias=NAME: the host key is
 * still checked against the name), no proxies, no shared connections, no
 * prompts, then git's own arguments.  Anything else is refused with 255
 * (ssh's own failure code) and a line on stderr; nothing connects.
 */
int sshpin_main(int argc, char **argv);

/* Make WORKDIR/bin/locklab-ssh a link to this program; its path in path. */
int sshpin_install(const char *workdir, char *path, size_t len);

#endif
