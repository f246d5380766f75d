/*
 * refname.h - the names a client gives the API that reach git or a
 * tree's row: a tree's name and a git revision.  Used by submissions*.c
 * (a submission's tree, git ref and base, a pull request's ref) and
 * trees.c (a new tree's name, branch and since).
 */
#ifndef LOCKLAB_SERVER_REFNAME_H
#define LOCKLAB_SERVER_REFNAME_H

#include <stdbool.h>

/* A tree's name: API_TREE_NAME_RULE says it for error replies. */
bool api_tree_name_ok(const char *s);
#define API_TREE_NAME_RULE                                                                         \
	"a name of 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

/* A git revision a client names: 1 to 255 bytes, no whitespace or control
 * bytes, not starting with '-'. */
bool api_git_ref_ok(const char *s);

#endif
