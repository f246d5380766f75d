/*
 * options.h - the one option engine of locklab's programs: every option is
 * a row of a table (flag, variable, type, where it goes, default, range,
 * the value's name in --help, help).  Values come from the default, then
 * the variable, then the flag: a flag wins over its variable and an empty
 * variable is unset.  A bad value, wherever it came from, is refused with
 * a message that names its source ("--poll" or "$LOCKLAB_POLL") and the
 * value.  The server, the agent, the client and lockbench's commands own
 * their tables (server/main.c, agents/main.c, client/locklab.c;
 * lockbench/src/run_args.c, cmd_compare.c, kernel_run_args.c and
 * kbuild.c); this file owns parsing and the --help layout.  The client and
 * lockbench print their own --help, one command's options at a time, and
 * so use only opts_parse.
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
	OPT_LIST,   /* struct opt_list, a flag that may be given again */
	/*
	 * bool, a flag with no value that makes it false: beside an OPT_FLAG
	 * on the same bool (--stacks, --no-stacks) the last one given wins.
	 * Its variable takes 1 (as the flag) or 0.
	 */
	OPT_FLAG_OFF,
};

/*
 * OPT_LIST's variable: the values in the order given, borrowed from argv,
 * the environment or the table (the array is the engine's).  The default
 * and the variable give one value each; the first flag replaces what they
 * gave and every later one adds its value.  It starts zeroed; opts_parse
 * empties it first, opts_list_release frees it.
 */
struct opt_list {
	const char **v;
	size_t n;
};

/*
 * One option.  name: a single letter is a short flag ("h": -h), else a
 * long one ("server": --server).  env NULL: no variable.  def NULL: none,
 * the variable keeps what the caller put there (a string left NULL stays
 * NULL).  max 0 for a whole number: as large as its type holds.  arg
 * NULL: "VALUE" (no value for a flag, "on|off" for OPT_ON_OFF).  help NULL
 * only in a table whose program prints its own --help.
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
	/*
	 * NULL: an argument that is not an option is refused.  Else the
	 * table takes operands among its options, in any order, as GNU
	 * getopt permutes them ("prog --wait submit x" and "prog submit
	 * --wait x" alike; "--" ends the options; $POSIXLY_CORRECT ends
	 * them at the first operand): argv is reordered, options first,
	 * and when opts_parse returns 0, *first_operand is the index of
	 * the first operand (argc: none).
	 */
	int *first_operand;
};

/*
 * Defaults, variables, then argv into the table's variables.  0 to run;
 * K + 1 when the command cmds[K] was given (nothing after it is read); -1
 * after a message on stderr (a bad value, an unknown option, a stray
 * argument, no memory: the caller exits 2).  given[i], when the table has
 * given, says whether row i was set by its variable or a flag.
 */
int opts_parse(const struct opt_table *t, int argc, char **argv);

/* Frees an OPT_LIST's array; l is empty after it. */
void opts_list_release(struct opt_list *l);

/* --help: intro, then each option and command wrapped to 80 columns, then outro. */
void opts_usage(const struct opt_table *t, FILE *f);

#endif
