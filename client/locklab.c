/*
 * locklab.c - the command-line client of locklab-server, and a gate for other
 * CI systems:
 *   locklab submit URL|FILE [--wait [--timeout S]] [--json] [--suite S]... [--server URL]
 *   locklab status [ID] [--json] [--server URL]
 *   locklab report ID [--format aim7|perf|lkp|text] [--server URL]
 *   locklab alerts [--json] [--server URL]
 *   locklab help [COMMAND], locklab --version
 * The server is --server, else $LOCKLAB_SERVER, else http://127.0.0.1:8080.
 * Options and the command's arguments may come in any order; lib/options.c
 * parses them.  Every request of one run goes over one libcurl handle, so
 * one kept-alive connection serves the submission, each poll and the
 * report.  The exit codes are enum gate_exit's, printed by --help and listed
 * in docs/api.md.  This file holds the options' and the commands' tables,
 * their help and main; the requests are locklab_http.c, the commands
 * locklab_cmds.c.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "locklab_internal.h"
#include "options.h"
#include "version.h"

/*
 * The options: the rows of the engine's table (lib/options.h), in the
 * order check_args names one a command does not take.  The client prints
 * their help itself, each command's own (options_help).
 */
enum option_row { O_WAIT, O_JSON, O_SUITE, O_TIMEOUT, O_FORMAT, O_SERVER, O_HELP, O_H, NOPTS };

#define TAKES(row) (1u << (row))
/* every command takes these */
#define TAKES_ALL (TAKES(O_SERVER) | TAKES(O_HELP) | TAKES(O_H))

static struct options cfg; /* the options as parsed */
static bool help;
static int first_operand;

static struct opt opts[NOPTS] = {
    [O_WAIT] = {"wait", NULL, OPT_FLAG, &cfg.wait, NULL, 0, 0, NULL, NULL},
    [O_JSON] = {"json", NULL, OPT_FLAG, &cfg.json, NULL, 0, 0, NULL, NULL},
    [O_SUITE] = {"suite", NULL, OPT_LIST, &cfg.suites, NULL, 0, 0, NULL, "NAME"},
    [O_TIMEOUT] = {"timeout", NULL, OPT_LONG, &cfg.timeout, NULL, 1, 30 * 86400, NULL, "SECONDS"},
    [O_FORMAT] = {"format", NULL, OPT_STR, &cfg.format, "text", 0, 0, NULL, "F"},
    [O_SERVER] = {"server", "LOCKLAB_SERVER", OPT_STR, &cl_server, "http://127.0.0.1:8080", 0, 0,
                  NULL, "URL"},
    [O_HELP] = {"help", NULL, OPT_FLAG, &help, NULL, 0, 0, NULL, NULL},
    [O_H] = {"h", NULL, OPT_FLAG, &help, NULL, 0, 0, NULL, NULL},
};

static bool opt_given[NOPTS];

static const struct opt_cmd cmds[] = {{"version", "the version"}};

static const struct opt_table table = {
    .prog = "locklab",
    .opts = opts,
    .n = NOPTS,
    .given = opt_given,
    .cmds = cmds,
    .ncmds = sizeof(cmds) / sizeof(cmds[0]),
    .first_operand = &first_operand,
};

/* The commands: their usage line, what they do, which options they take. */
static const struct command {
	const char *name;
	const char *usage; /* after "locklab NAME" */
	const char *what;
	unsigned takes; /* TAKES() of option rows, besides TAKES_ALL */
} commands[] = {
    {"submit", "URL|FILE [--wait [--timeout SECONDS]] [--json] [--suite NAME]...",
     "submit a series (mbox FILE or URL); with --wait a CI gate",
     TAKES(O_WAIT) | TAKES(O_JSON) | TAKES(O_SUITE) | TAKES(O_TIMEOUT)},
    {"status", "[ID] [--json]", "one submission and its jobs, or the list of submissions",
     TAKES(O_JSON)},
    {"report", "ID [--format aim7|perf|lkp|text]",
     "a finished submission's report (text unless --format says otherwise)", TAKES(O_FORMAT)},
    {"alerts", "[--json]", "the tracker's alerts: steps found in tracked branches", TAKES(O_JSON)},
    {"help", "[COMMAND]", "this text, or one command's", 0},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char *const report_formats[] = {"aim7", "perf", "lkp", "text"};

/* The options' help: which command takes each (0: every one) and the text. */
static const struct {
	unsigned bit;
	const char *text;
} options_help[] = {
    {0, "  --server URL       the server: --server, else $LOCKLAB_SERVER, else\n"
        "                     http://127.0.0.1:8080\n"},
    {TAKES(O_WAIT),
     "  --wait             follow the submission until it is done or failed, then print\n"
     "                     the text report; progress is redrawn in place on a terminal\n"
     "                     and printed as lines (when something changes) otherwise\n"},
    {TAKES(O_TIMEOUT),
     "  --timeout SECONDS  give up waiting after SECONDS (exit 6); the run goes on\n"},
    {TAKES(O_SUITE), "  --suite NAME       a suite to run (again for several; unset: the server's "
                     "choice)\n"},
    {TAKES(O_JSON),
     "  --json             print the API's JSON document instead of text: the submission\n"
     "                     (with --wait, as it ended), the list, or the alerts; progress\n"
     "                     then goes to stderr\n"},
    {TAKES(O_FORMAT), "  --format F         the report's format: aim7, perf, lkp or text\n"},
    {0, "  --help             this text (after a command: that command's)\n"
        "  --version          the version\n"},
};

/* The help of the options of takes (every option: ~0u) and of every command's. */
static void options_print(FILE *out, unsigned takes)
{
	for (size_t i = 0; i < sizeof(options_help) / sizeof(options_help[0]); i++)
		if (!options_help[i].bit || (options_help[i].bit & takes))
			fputs(options_help[i].text, out);
}

static const char exit_codes_text[] =
    "exit codes of submit --wait (a CI gate):\n"
    "  0  no-change or improvement       4  inconclusive\n"
    "  1  regression                     5  failed (did not apply or build, no agent)\n"
    "  2  bad usage or unreadable FILE   6  --timeout passed first\n"
    "  3  lockup, splat or crash         7  server unreachable or it answered an error\n"
    "the other commands exit 0, 2 or 7\n";

static void usage(FILE *out)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "%s locklab %s %s\n", i ? "      " : "usage:", commands[i].name,
		        commands[i].usage);
	fprintf(out, "\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].what);
	fprintf(out, "\noptions:\n");
	options_print(out, ~0u);
	fprintf(out, "\n%s", exit_codes_text);
}

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* One command's usage, what it does and the exit codes. */
static void command_usage(FILE *out, const struct command *c)
{
	fprintf(out, "usage: locklab %s %s\n\n%s\n\noptions:\n", c->name, c->usage, c->what);
	options_print(out, c->takes);
	fprintf(out, "\n%s",
	        strcmp(c->name, "submit") ? "exits 0, 2 (bad usage) or 7 (server unreachable or "
	                                    "it answered an error)\n"
	                                  : exit_codes_text);
}

static int parse_id(int argc, char **argv, long long *id)
{
	char *end = NULL;

	*id = argc == 1 ? strtoll(argv[0], &end, 10) : 0;
	return argc == 1 && !*end && *id > 0 ? 0 : -1;
}

/*
 * Everything that can be checked without the server: the options the
 * command takes, --format and --server.  0, or GATE_USAGE after a message.
 */
static int check_args(const struct command *c)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opt_given[i] && !(TAKES(i) & (c->takes | TAKES_ALL))) {
			fprintf(stderr, "locklab: %s takes no --%s (locklab help %s)\n", c->name,
			        opts[i].name, c->name);
			return GATE_USAGE;
		}
	if (cfg.timeout && !cfg.wait) {
		fprintf(stderr, "locklab: --timeout bounds submit --wait\n");
		return GATE_USAGE;
	}
	for (i = 0; i < sizeof(report_formats) / sizeof(report_formats[0]); i++)
		if (!strcmp(cfg.format, report_formats[i]))
			break;
	if (i == sizeof(report_formats) / sizeof(report_formats[0])) {
		fprintf(stderr, "locklab: --format: '%s' is not aim7, perf, lkp or text\n",
		        cfg.format);
		return GATE_USAGE;
	}
	if (strncasecmp(cl_server, "http://", 7) && strncasecmp(cl_server, "https://", 8)) {
		fprintf(stderr, "locklab: the server '%s' is not an http:// or https:// URL\n",
		        cl_server);
		return GATE_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double started = cl_now_seconds();
	const struct command *c;
	const char *cmd;
	char **args;
	long long id = 0;
	int nargs, ret = GATE_USAGE;

	/* the operands, the command and its arguments, follow the options */
	switch (opts_parse(&table, argc, argv)) {
	case 0:
		break;
	case 1:
		version_print(stdout, "locklab");
		ret = GATE_PASS;
		goto out;
	default:
		goto out;
	}
	cmd = first_operand < argc ? argv[first_operand] : NULL;
	args = argv + first_operand + 1;
	nargs = cmd ? argc - first_operand - 1 : 0;
	/* --help, locklab help, locklab help COMMAND, locklab COMMAND --help */
	if (help || (cmd && !strcmp(cmd, "help"))) {
		const char *topic = cmd && strcmp(cmd, "help") ? cmd : nargs ? args[0] : NULL;

		if ((cmd && !strcmp(cmd, "help") && nargs > 1) || (topic && !command_find(topic))) {
			fprintf(stderr, "locklab: no command '%s'; try 'locklab help'\n",
			        topic ? topic : args[1]);
			goto out;
		}
		if (topic)
			command_usage(stdout, command_find(topic));
		else
			usage(stdout);
		ret = GATE_PASS;
		goto out;
	}
	if (!cmd) {
		usage(stderr);
		goto out;
	}
	if (!(c = command_find(cmd))) {
		fprintf(stderr, "locklab: unknown command '%s'\n", cmd);
		usage(stderr);
		goto out;
	}
	if (check_args(c) != 0)
		goto out;
	if (!strcmp(cmd, "report") && parse_id(nargs, args, &id) != 0) {
		fprintf(stderr, "locklab: report takes one submission ID\n");
		goto out;
	}
	if (cfg.timeout)
		cl_deadline = started + (double)cfg.timeout;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cl_conn = curl_easy_init();
	if (!cl_conn) {
		fprintf(stderr, "locklab: cannot start libcurl\n");
		ret = GATE_SERVER;
	} else if (!strcmp(cmd, "submit")) {
		ret = cmd_submit(nargs, args, &cfg, started);
	} else if (!strcmp(cmd, "status")) {
		ret = cmd_status(nargs, args, &cfg);
	} else if (!strcmp(cmd, "alerts")) {
		ret = cmd_alerts(nargs, &cfg);
	} else {
		ret = cl_print_report(id, cfg.format);
	}
	if (cl_conn)
		curl_easy_cleanup(cl_conn);
	curl_global_cleanup();
out:
	opts_list_release(&cfg.suites);
	return ret;
}
