/*
 * locklab.c - the command-line client of locklab-server, and a gate for other
 * CI systems:
 *   locklab submit URL|FILE [--wait [--timeout S]] [--json] [--suite S]... [--server URL]
 *   locklab status [ID] [--json] [--server URL]
 *   locklab report ID [--format aim7|perf|lkp|text] [--server URL]
 *   locklab alerts [--json] [--server URL]
 *   locklab help [COMMAND], locklab --version
 * The server defaults to $LOCKLAB_SERVER, else http://127.0.0.1:8080.  Every
 * request of one run goes over one libcurl handle, so one kept-alive
 * connection serves the submission, each poll and the report.  The exit codes
 * are enum gate_exit's, printed by --help and listed in docs/api.md.  This
 * file holds the commands' table, their help and main; the requests are
 * locklab_http.c, the commands locklab_cmds.c.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "locklab_internal.h"
#include "version.h"

/* The commands: their usage line, what they do, which options they take. */
enum { OPT_WAIT = 1, OPT_JSON = 2, OPT_SUITE = 4, OPT_TIMEOUT = 8, OPT_FORMAT = 16 };

static const struct command {
	const char *name;
	const char *usage; /* after "locklab NAME" */
	const char *what;
	unsigned takes; /* OPT_* bits */
} commands[] = {
    {"submit", "URL|FILE [--wait [--timeout SECONDS]] [--json] [--suite NAME]...",
     "submit a series (mbox FILE or URL); with --wait a CI gate",
     OPT_WAIT | OPT_JSON | OPT_SUITE | OPT_TIMEOUT},
    {"status", "[ID] [--json]", "one submission and its jobs, or the list of submissions",
     OPT_JSON},
    {"report", "ID [--format aim7|perf|lkp|text]",
     "a finished submission's report (text unless --format says otherwise)", OPT_FORMAT},
    {"alerts", "[--json]", "the tracker's alerts: steps found in tracked branches", OPT_JSON},
    {"help", "[COMMAND]", "this text, or one command's", 0},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char *const report_formats[] = {"aim7", "perf", "lkp", "text"};

/* The options: which command takes each (0: every one) and its help. */
static const struct {
	unsigned bit;
	const char *text;
} options_help[] = {
    {0, "  --server URL       the server: --server, else $LOCKLAB_SERVER, else\n"
        "                     http://127.0.0.1:8080\n"},
    {OPT_WAIT, "  --wait             follow the submission until it is done or failed, then print\n"
               "                     the text report; progress is redrawn in place on a terminal\n"
               "                     and printed as lines (when something changes) otherwise\n"},
    {OPT_TIMEOUT, "  --timeout SECONDS  give up waiting after SECONDS (exit 6); the run goes on\n"},
    {OPT_SUITE, "  --suite NAME       a suite to run (again for several; unset: the server's "
                "choice)\n"},
    {OPT_JSON,
     "  --json             print the API's JSON document instead of text: the submission\n"
     "                     (with --wait, as it ended), the list, or the alerts; progress\n"
     "                     then goes to stderr\n"},
    {OPT_FORMAT, "  --format F         the report's format: aim7, perf, lkp or text\n"},
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

/* The option of bit, as written on the command line. */
static const char *option_name(unsigned bit)
{
	switch (bit) {
	case OPT_WAIT:
		return "--wait";
	case OPT_JSON:
		return "--json";
	case OPT_SUITE:
		return "--suite";
	case OPT_TIMEOUT:
		return "--timeout";
	default:
		return "--format";
	}
}

/*
 * Everything that can be checked without the server: the options the
 * command takes, --format and --server.  0, or GATE_USAGE after a message.
 */
static int check_args(const struct command *c, unsigned given, const struct options *o)
{
	unsigned extra = given & ~c->takes;
	size_t i;

	if (extra) {
		fprintf(stderr, "locklab: %s takes no %s (locklab help %s)\n", c->name,
		        option_name(extra & -extra), c->name);
		return GATE_USAGE;
	}
	if (o->timeout && !o->wait) {
		fprintf(stderr, "locklab: --timeout bounds submit --wait\n");
		return GATE_USAGE;
	}
	for (i = 0; i < sizeof(report_formats) / sizeof(report_formats[0]); i++)
		if (!strcmp(o->format, report_formats[i]))
			break;
	if (i == sizeof(report_formats) / sizeof(report_formats[0])) {
		fprintf(stderr, "locklab: --format: '%s' is not aim7, perf, lkp or text\n",
		        o->format);
		return GATE_USAGE;
	}
	if (strncasecmp(cl_server, "http://", 7) && strncasecmp(cl_server, "https://", 8)) {
		fprintf(stderr, "locklab: the server '%s' is not an http:// or https:// URL\n",
		        cl_server);
		return GATE_USAGE;
	}
	return 0;
}

/*
 * The options before (and, as GNU getopt moves them, among) the command's
 * arguments into o, given (OPT_* of those given) and help: -1 when they
 * are good, else the exit status (--version, or a bad one: said on stderr).
 */
static int parse_options(int argc, char **argv, struct options *o, unsigned *given, bool *help)
{
	static const struct option longopts[] = {
	    {"server", required_argument, NULL, 's'},
	    {"wait", no_argument, NULL, 'w'},
	    {"format", required_argument, NULL, 'f'},
	    {"suite", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"timeout", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int ch;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			cl_server = optarg;
			break;
		case 'w':
			o->wait = true;
			*given |= OPT_WAIT;
			break;
		case 'f':
			o->format = optarg;
			*given |= OPT_FORMAT;
			break;
		case 'S':
			json_array_append_new(o->suites, json_string(optarg));
			*given |= OPT_SUITE;
			break;
		case 'j':
			o->json = true;
			*given |= OPT_JSON;
			break;
		case 't':
			errno = 0;
			o->timeout = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->timeout <= 0 ||
			    o->timeout > 30 * 86400) {
				fprintf(stderr,
				        "locklab: --timeout wants whole seconds, 1 to 2592000\n");
				return GATE_USAGE;
			}
			*given |= OPT_TIMEOUT;
			break;
		case 'h':
			*help = true;
			break;
		case 'V':
			version_print(stdout, "locklab");
			return GATE_PASS;
		default:
			usage(stderr);
			return GATE_USAGE;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *env = getenv("LOCKLAB_SERVER");
	struct options o = {.format = "text", .suites = json_array()};
	double started = cl_now_seconds();
	const struct command *c;
	const char *cmd;
	char **args;
	long long id = 0;
	unsigned given = 0;
	bool help = false;
	int nargs, ret;

	if (env && *env)
		cl_server = env;
	/* GNU getopt moves the command and its arguments after the options */
	ret = parse_options(argc, argv, &o, &given, &help);
	if (ret >= 0)
		goto out;
	ret = GATE_USAGE;
	cmd = optind < argc ? argv[optind] : NULL;
	args = argv + optind + 1;
	nargs = cmd ? argc - optind - 1 : 0;
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
	if (check_args(c, given, &o) != 0)
		goto out;
	if (!strcmp(cmd, "report") && parse_id(nargs, args, &id) != 0) {
		fprintf(stderr, "locklab: report takes one submission ID\n");
		goto out;
	}
	if (o.timeout)
		cl_deadline = started + (double)o.timeout;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cl_conn = curl_easy_init();
	if (!cl_conn) {
		fprintf(stderr, "locklab: cannot start libcurl\n");
		ret = GATE_SERVER;
	} else if (!strcmp(cmd, "submit")) {
		ret = cmd_submit(nargs, args, &o, started);
	} else if (!strcmp(cmd, "status")) {
		ret = cmd_status(nargs, args, &o);
	} else if (!strcmp(cmd, "alerts")) {
		ret = cmd_alerts(nargs, &o);
	} else {
		ret = cl_print_report(id, o.format);
	}
	if (cl_conn)
		curl_easy_cleanup(cl_conn);
	curl_global_cleanup();
out:
	json_decref(o.suites);
	return ret;
}
