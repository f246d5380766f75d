/*
 * options.h - the one option engine of locklab's programs: every option is
 * a row of a table (flag, variable, type, where it goes, default, range,
 * the value's name in --help, help).  Values come from the default, then
 * the variable, then the flag: a flag wins over its variable and an empty
 * variable is unset.  A bad value, wherever it came from, is refused with
 * a message that names its source ("--poll" or "$LOCKLAB_POLL") and the
 * value.  The server and the agent own their tables (server/main.c,
 * agents/main.c); this file owns parsing and the --help layout.
 */
#ifndef LOCKLAB_OPTIONS_H
#define LOCKLAB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_type {
	OPT_STR,    /* const char * */
	OPT_INT,    /* int, a whole number from min to max */
	OPT_LONG,   /* long, the same */
	OPT_UINT,   /* unsigned, the same */
	OPT_SIZE,   /* size_t, the same */
	OPT_DOUBLE, /* double, a number from min to max */
	OPT_ON_OFF, /* bool, "on" or "off" */
	OPT_FLAG,   /* bool, a flag with no value; its variable takes 1 or 0 */
};

/*
 * One option.  env NULL: no variable.  def NULL: unset (a string stays
 * NULL).  max 0 for a whole number: as large as its type holds.  arg NULL:
 * "VALUE" (no value for OPT_FLAG, "on|off" for OPT_ON_OFF).
 */
struct opt {
	const char *name;
	const char *env;
	enum opt_type type;
	void *ptr;
	const char *def;
	double min, max;
	const char *help;
	const char *arg;
};

/* A flag that is a command of its own (--help, --version, --routes). */
struct opt_cmd {
	const char *name;
	const char *help;
};

struct opt_table {
	const char *prog; /* "locklab-server": the messages' prefix */
	struct opt *opts;
	size_t n;
	bool *given; /* NULL, or n flags: set by a variable or a flag */
	const struct opt_cmd *cmds;
	size_t ncmds;
	const char *intro; /* --help's text before the options */
	const char *outro; /* and after them; NULL: none */
};

/*
 * Defaults, variables, then argv into the table's variables.  0 to run;
 * K + 1 when the command cmds[K] was given (nothing after it is read); -1
 * after a message on stderr (a bad value, an unknown option, a stray
 * argument: the caller exits 2).
 */
int opts_parse(const struct opt_table *t, int argc, char **argv);

/* --help: intro, then each option and command wrapped to 80 columns, then outro. */
void opts_usage(const struct opt_table *t, FILE *f);

#endif
