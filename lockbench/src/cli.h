/*
 * cli.h - what lockbench's command files share.  cli.c holds the table of
 * commands, the reading of a command's options, the overview, help and
 * list; main.c the dispatch; cmd_run.c owns run and validate,
 * cmd_compare.c compare, plan, changepoint and image; kernel_cli.c kernel.
 * Each command takes its own argv (argv[0] its name) and returns the exit
 * status.
 */
#ifndef LOCKBENCH_CLI_H
#define LOCKBENCH_CLI_H

#include <stdio.h>

#define EXIT_USAGE  2
#define EXIT_LOCKUP 3

/* the command running, for its usage errors (NULL: none yet) */
extern const char *lb_command_name;

/* "lockbench: " fmt (with arg), then where to look; returns EXIT_USAGE */
int usage_error(const char *fmt, const char *arg);

/* each command's options as `lockbench COMMAND --help` prints them */
extern const char run_options_text[];
extern const char compare_options_text[];
extern const char plan_options_text[];

/* a command: its overview line, its options' text, what runs it */
struct command {
	const char *name;
	const char *args;    /* after the name (and before [OPTIONS]) */
	const char *summary; /* lines of the overview */
	const char *options; /* NULL: none */
	const char *options_title;
	int (*run)(int argc, char **argv); /* argv[0]: the command's name */
};

struct opt_table;

/*
 * A command's options: t (lib/options.h; its one command is --help) read
 * from the command's argv with lb_opts_parse (args.h).  -1 to go on, else
 * the exit status: 0 after c's help on stdout, EXIT_USAGE after a message.
 */
int lb_command_opts(const struct opt_table *t, const struct command *c, int argc, char **argv);

/* the command called name, or NULL */
const struct command *lb_command_find(const char *name);
/* lockbench --help: every command's overview */
void lb_print_help(FILE *f);
/* lockbench COMMAND --help */
void lb_print_command_help(FILE *f, const struct command *c);

int cmd_help(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_changepoint(int argc, char **argv);
int cmd_image(int argc, char **argv);

#endif
