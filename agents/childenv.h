/*
 * childenv.h - the environment every process the agent starts gets: a
 * cleared one holding only the variables of childenv_pass from the agent's
 * own (the token never reaches a child) and the caller's extra entries.
 * spawn.c gives it to every command, sandbox.c to its bubblewrap probe.
 */
#ifndef LOCKLAB_AGENT_CHILDENV_H
#define LOCKLAB_AGENT_CHILDENV_H

/* Variables passed from the agent's environment to every child. */
extern const char *const childenv_pass[];

/*
 * A new NULL-terminated "NAME=value" array: childenv_pass's variables that
 * are set here, then the entries of extra (NULL-terminated, or NULL).
 * Freed with childenv_free.
 */
char **childenv_make(const char *const *extra);
void childenv_free(char **envp);

#endif
