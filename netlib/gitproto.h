/*
 * gitproto.h - the protocols git may use when it fetches a URL that came
 * from a submitter or an admin: the one "-c protocol..." policy, shared by
 * the agent's fetch of a submitted ref (agents/build.c) and the server's
 * fetch of a tracked branch (server/track.c).
 *
 * Allowed: https, http, git and ssh.  Never: ext:: and every other
 * protocol (protocol.allow=never); file:// only when the caller says so.
 */
#ifndef LOCKLAB_GITPROTO_H
#define LOCKLAB_GITPROTO_H

#include <stdbool.h>
#include <stddef.h>

/* How many argv entries gitproto_args writes. */
#define GITPROTO_ARGC 12

/*
 * Writes GITPROTO_ARGC entries ("-c", "protocol...=...", ...) into argv,
 * which must have room for them; file:// is allowed only when allow_file.
 * The strings are static (the caller frees nothing).  Returns GITPROTO_ARGC.
 */
size_t gitproto_args(const char **argv, bool allow_file);

#endif
