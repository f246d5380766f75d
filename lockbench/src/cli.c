/* cli.c - see cli.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "kernel.h"
#include "kernel_cli.h"
#include "suite.h"

#include "cli.h"

static const char *prog = "lockbench";

const char *lb_command_name;

int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lockbench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'lockbench%s%s --help'\n", lb_command_name ? " " : "",
	        lb_command_name ? lb_command_name : "");
	return EXIT_USAGE;
}

static const struct command commands[] = {
    {"list", "", "locks, workloads and suites", NULL, NULL, cmd_list},
    {"run", "", "run a suite, print a table, write result JSON", run_options_text,
     "options (defaults in brackets)", cmd_run},
    {"validate", "", "correctness torture of every lock", run_options_text,
     "options (run's; defaults in brackets)", cmd_validate},
    {"compare", "BASE.json PATCHED.json",
     "mailing-list tables with significance\n(a,b,c.json: several rounds of one side)",
     compare_options_text, "options (defaults in brackets)", cmd_compare},
    {"image", "FILE...",
     "the image of each executable: two builds\nwith one image run the same code", NULL, NULL,
     cmd_image},
    {"plan", "BASE.json PATCHED.json",
     "the rounds a job plans from these A/A rounds\n(the same lockbench both sides), as the "
     "server\nplans from an agent's noise profile",
     plan_options_text, "options (the server's option of the same name in brackets)", cmd_plan},
    {"changepoint", "[FILE]",
     "steps in a series of numbers (one per commit),\nE-Divisive as the server's tracker runs "
     "it",
     NULL, NULL, cmd_changepoint},
    {"kernel", "build|run", "kernel build; boot with locktorture, lockbench", NULL, NULL,
     kernel_main},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char exit_status_text[] =
    "exit status: 0 ok, 1 failure, 2 bad usage, 3 lockup found (validate: lock failed)\n";

const struct command *lb_command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* text's lines, each after indent spaces but the first */
static void put_lines(FILE *f, const char *text, int indent)
{
	for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1)
		fprintf(f, "%.*s\n%*s", (int)(nl - text), text, indent, "");
	fprintf(f, "%s\n", text);
}

void lb_print_help(FILE *f)
{
	fprintf(f, "usage: lockbench COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char head[64];

		snprintf(head, sizeof(head), "%s%s%s", commands[i].name,
		         *commands[i].args ? " " : "", commands[i].args);
		if (strlen(head) > 29)
			fprintf(f, "  %s\n  %-29s ", head, "");
		else
			fprintf(f, "  %-29s ", head);
		put_lines(f, commands[i].summary, 32);
	}
	fprintf(f,
	        "\n"
	        "  lockbench COMMAND --help, or lockbench help COMMAND: that command's options\n"
	        "  lockbench help --all: every command's options\n"
	        "  lockbench --version: the version\n\n%s",
	        exit_status_text);
}

/* One command's usage and options. */
void lb_print_command_help(FILE *f, const struct command *c)
{
	if (!strcmp(c->name, "kernel")) {
		kernel_print_help(f);
		return;
	}
	fprintf(f, "usage: lockbench %s%s%s%s\n\n", c->name, *c->args ? " " : "", c->args,
	        c->options ? " [OPTIONS]" : "");
	put_lines(f, c->summary, 0);
	if (c->options)
		fprintf(f, "\n%s:\n%s", c->options_title, c->options);
	fprintf(f, "\n%s", exit_status_text);
}

int lb_command_opts(const struct opt_table *t, const struct command *c, int argc, char **argv)
{
	switch (lb_opts_parse(t, argc, argv)) {
	case 0:
		return -1;
	case 1:
		lb_print_command_help(stdout, c);
		return 0;
	default:
		return EXIT_USAGE;
	}
}

/* lockbench help [COMMAND|--all] */
int cmd_help(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		lb_print_help(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--all")) {
		lb_print_help(stdout);
		for (size_t i = 0; i < NCOMMANDS; i++) {
			if (i && commands[i].options &&
			    commands[i].options == commands[i - 1].options)
				continue; /* validate: run's */
			if (!commands[i].options && strcmp(commands[i].name, "kernel"))
				continue;
			printf("\n%s %s:\n",
			       !strcmp(commands[i].name, "run") ? "run and validate"
			                                        : commands[i].name,
			       commands[i].options ? commands[i].options_title : "options");
			if (commands[i].options)
				fputs(commands[i].options, stdout);
			else
				kernel_print_help(stdout);
		}
		return 0;
	}
	if (argc > 2 || !(c = lb_command_find(argv[1]))) {
		fprintf(stderr, "%s: help: no command '%s'\n", prog, argv[1]);
		fprintf(stderr, "try '%s --help'\n", prog);
		return EXIT_USAGE;
	}
	lb_print_command_help(stdout, c);
	return 0;
}

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return usage_error("list takes no arguments%s", "");
	const struct lock_ops *const *locks = lock_all();
	const struct workload *const *wls = workload_all();
	const char *const *suites = suite_names();

	printf("locks:\n");
	for (int i = 0; locks[i]; i++)
		printf("  %-18s %s%s\n", locks[i]->name, locks[i]->description,
		       locks[i]->test_only ? " [test build only]" : "");
	printf("\nworkloads:\n");
	for (int i = 0; wls[i]; i++)
		if (!wls[i]->hidden)
			printf("  %-18s %s%s\n", wls[i]->name, wls[i]->description,
			       wls[i]->uses_lock ? "" : " [lock: kernel]");
	printf("\nsuites:\n");
	for (int i = 0; suites[i]; i++)
		printf("  %-18s %s\n", suites[i], suite_description(suites[i]));
	return 0;
}
