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
 * are enum gate_exit's, printed by --help and listed in docs/api.md.
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
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "strutil.h"
#include "version.h"

#define MAX_REPLY    (64u << 20)
#define POLL_SECONDS 2

/* What `locklab submit --wait` exits with; the other commands use 0, 2 and 7. */
enum gate_exit {
	GATE_PASS = 0,         /* done: no-change or improvement (or any command that worked) */
	GATE_REGRESSION = 1,   /* done: regression */
	GATE_USAGE = 2,        /* bad usage, or a FILE that cannot be read */
	GATE_LOCKUP = 3,       /* done: lockup, splat or crash */
	GATE_INCONCLUSIVE = 4, /* done: inconclusive (or a verdict this client does not know) */
	GATE_FAILED = 5,  /* failed: the series did not apply or build, or no agent finished it */
	GATE_TIMEOUT = 6, /* --timeout passed before the submission finished */
	GATE_SERVER = 7,  /* the server could not be reached or answered an error */
};

struct reply {
	char *data;
	size_t len;
	long status;
};

struct options {
	bool wait, json;
	long timeout; /* seconds, 0: none */
	const char *format;
	json_t *suites;
};

static const char *server = "http://127.0.0.1:8080";
static CURL *conn;      /* the one handle of this run: its connection is reused */
static double deadline; /* monotonic seconds, 0: none (--timeout) */
static bool timed_out;  /* the last request ran into the deadline */

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

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t add = size * n;
	char *nd;

	if (r->len + add > MAX_REPLY)
		return 0;
	nd = realloc(r->data, r->len + add + 1);
	if (!nd)
		return 0;
	memcpy(nd + r->len, p, add);
	r->data = nd;
	r->len += add;
	r->data[r->len] = '\0';
	return add;
}

/*
 * One request over the run's handle; 0 with r filled (any HTTP status, r->data
 * never NULL), or -1 after a message (timed_out says whether the deadline cut
 * it).  curl_easy_reset keeps the handle's connection cache: the next request
 * reuses the connection when the server kept it open.
 */
static int request(const char *method, const char *path, const char *body, struct reply *r)
{
	struct curl_slist *hdrs = NULL;
	char url[4096], err[CURL_ERROR_SIZE] = "";
	long timeout_ms = 300 * 1000L;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	timed_out = false;
	if (deadline > 0) {
		double left = deadline - now_seconds();

		if (left <= 0) {
			timed_out = true;
			return -1;
		}
		if (left * 1000 < timeout_ms)
			timeout_ms = (long)(left * 1000) + 1;
	}
	snprintf(url, sizeof(url), "%s%s", server, path);
	curl_easy_reset(conn);
	curl_easy_setopt(conn, CURLOPT_URL, url);
	curl_easy_setopt(conn, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(conn, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(conn, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(conn, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(conn, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(conn, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(conn, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(conn, CURLOPT_WRITEDATA, r);
	if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(conn, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(conn, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(conn, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	rc = curl_easy_perform(conn);
	if (rc == CURLE_OK)
		curl_easy_getinfo(conn, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		timed_out = rc == CURLE_OPERATION_TIMEDOUT && deadline > 0 &&
		            now_seconds() >= deadline - 0.01;
		if (!timed_out)
			fprintf(stderr, "locklab: %s: %s\n", url,
			        err[0] ? err : curl_easy_strerror(rc));
		free(r->data);
		r->data = NULL;
		return -1;
	}
	if (!r->data)
		r->data = strutil_xstrdup("");
	return 0;
}

/* Print the server's {"error","detail"} (or the raw body) for a failed call. */
static void print_error(const char *path, const struct reply *r)
{
	json_t *doc = json_loadb(r->data, r->len, 0, NULL);
	const char *e = NULL, *d = NULL;

	if (doc && json_unpack(doc, "{s:s, s:s}", "error", &e, "detail", &d) == 0)
		fprintf(stderr, "locklab: %s: server said %ld %s: %s\n", path, r->status, e, d);
	else
		fprintf(stderr, "locklab: %s: server said %ld: %.200s\n", path, r->status, r->data);
	json_decref(doc);
}

/*
 * GET path and parse it; the JSON (new reference) or NULL after a message.
 * When raw is not NULL it takes the body as sent (the caller frees it).
 */
static json_t *get_json(const char *path, char **raw)
{
	struct reply r;
	json_t *doc = NULL;
	json_error_t jerr;

	if (raw)
		*raw = NULL;
	if (request("GET", path, NULL, &r) != 0)
		return NULL;
	if (r.status != 200) {
		print_error(path, &r);
		goto out;
	}
	doc = json_loadb(r.data, r.len, 0, &jerr);
	if (!doc) {
		fprintf(stderr, "locklab: %s: not JSON: %s\n", path, jerr.text);
		goto out;
	}
	if (raw) {
		*raw = r.data;
		r.data = NULL;
	}
out:
	free(r.data);
	return doc;
}

/* A document exactly as the server sent it, ending in one newline. */
static void print_raw(FILE *out, const char *raw)
{
	size_t len = strlen(raw);

	fputs(raw, out);
	if (!len || raw[len - 1] != '\n')
		fputc('\n', out);
	fflush(out);
}

/*
 * obj[key] as text: a string as it is, an integer in decimal, else dflt
 * (missing, null).  json_unpack's "s?s" refuses a null value and stops there,
 * and the API sends null for what is not known yet.
 */
static const char *field_text(json_t *obj, const char *key, char *buf, size_t len, const char *dflt)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v) && buf) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return dflt;
}

static const char *field_str(json_t *obj, const char *key, const char *dflt)
{
	return field_text(obj, key, NULL, 0, dflt);
}

static int print_report(long long id, const char *format)
{
	char path[256];
	struct reply r;

	snprintf(path, sizeof(path), "/api/v1/submissions/%lld/report?format=%s", id, format);
	if (request("GET", path, NULL, &r) != 0)
		return GATE_SERVER;
	if (r.status != 200) {
		print_error(path, &r);
		free(r.data);
		return GATE_SERVER;
	}
	fwrite(r.data, 1, r.len, stdout);
	fflush(stdout);
	free(r.data);
	return GATE_PASS;
}

/* "submission N: state (verdict)", its subject, reason and jobs, one line each. */
static void status_text(long long id, json_t *doc, struct strutil_buf *sb)
{
	const char *state = field_str(doc, "state", "?"),
	           *verdict = field_str(doc, "verdict", NULL);
	const char *subject = field_str(doc, "subject", ""),
	           *reason = field_str(doc, "reason", NULL);
	json_t *job;
	size_t i;

	strutil_buf_addf(sb, "submission %lld: %s%s%s%s\n  %s\n", id, state, verdict ? " (" : "",
	                 verdict ? verdict : "", verdict ? ")" : "", subject);
	if (reason)
		strutil_buf_addf(sb, "  reason: %s\n", reason);
	json_array_foreach(json_object_get(doc, "jobs"), i, job)
	{
		const char *suite = field_str(job, "suite", ""),
		           *jstate = field_str(job, "state", "");
		json_int_t jid = 0, rounds = 0, complete = 0;
		/* verdict and confirm_from are null until set: read them apart */
		json_t *jverdict = json_object_get(job, "verdict");
		json_t *confirm = json_object_get(job, "confirm_from");

		json_unpack(job, "{s?I, s?I, s?I}", "id", &jid, "rounds", &rounds,
		            "rounds_complete", &complete);
		strutil_buf_addf(sb, "  job %lld %s: %s, %lld/%lld rounds", (long long)jid, suite,
		                 jstate, (long long)complete, (long long)rounds);
		if (json_is_integer(confirm) && strcmp(jstate, "running") == 0)
			strutil_buf_addf(sb, ", confirming a change from round %lld",
			                 (long long)json_integer_value(confirm));
		if (json_is_string(jverdict))
			strutil_buf_addf(sb, ", %s", json_string_value(jverdict));
		strutil_buf_add(sb, "\n");
	}
}

/*
 * Progress of a wait.  On a terminal the status is redrawn in place (cursor
 * up over the last drawing, clear, draw; lines cut to the width so none
 * wraps); otherwise only the lines that were not in the last status are
 * printed, so a log gets one line per change and no control characters.
 */
struct progress {
	FILE *out;
	bool tty;
	int drawn; /* lines on the terminal from the last drawing */
	char *last;
};

static bool text_has_line(const char *text, const char *line, size_t len)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l == len && !memcmp(p, line, len))
			return true;
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

static void progress_show(struct progress *p, const char *text, double elapsed)
{
	if (p->tty) {
		struct winsize ws;
		int width = ioctl(fileno(p->out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1
		                ? ws.ws_col - 1
		                : 79;
		bool first = true;

		if (p->drawn)
			fprintf(p->out, "\033[%dA", p->drawn);
		fputs("\r\033[J", p->out);
		p->drawn = 0;
		for (const char *s = text; *s;) {
			const char *nl = strchr(s, '\n');
			int len = nl ? (int)(nl - s) : (int)strlen(s);
			char tail[32] = "";

			if (first)
				snprintf(tail, sizeof(tail), "  [%.0f s]", elapsed);
			fprintf(p->out, "%.*s%s\n", len < width ? len : width, s, tail);
			p->drawn++;
			first = false;
			s = nl ? nl + 1 : s + len;
		}
	} else {
		for (const char *s = text; *s;) {
			const char *nl = strchr(s, '\n');
			size_t len = nl ? (size_t)(nl - s) : strlen(s);

			if (!text_has_line(p->last, s, len))
				fprintf(p->out, "%.*s\n", (int)len, s);
			s = nl ? nl + 1 : s + len;
		}
	}
	fflush(p->out);
	free(p->last);
	p->last = strutil_xstrdup(text);
}

/* The exit code for a finished submission's state and verdict. */
static int gate_code(const char *state, const char *verdict)
{
	static const struct {
		const char *verdict;
		int code;
	} codes[] = {
	    {"no-change", GATE_PASS},
	    {"improvement", GATE_PASS},
	    {"regression", GATE_REGRESSION},
	    {"lockup", GATE_LOCKUP},
	    {"splat", GATE_LOCKUP},
	    {"crash", GATE_LOCKUP},
	    {"inconclusive", GATE_INCONCLUSIVE},
	};

	if (strcmp(state, "done") != 0)
		return GATE_FAILED;
	for (size_t i = 0; verdict && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(verdict, codes[i].verdict))
			return codes[i].code;
	return GATE_INCONCLUSIVE;
}

/* Follow submission id until it is done or failed, or the deadline passes. */
static int wait_for(long long id, const struct options *o, double started)
{
	struct progress p = {.out = o->json ? stderr : stdout};
	char path[128], *raw = NULL;
	json_t *doc = NULL;
	const char *state = "", *verdict = NULL;
	int ret;

	p.tty = isatty(fileno(p.out));
	snprintf(path, sizeof(path), "/api/v1/submissions/%lld", id);
	for (;;) {
		struct strutil_buf sb = STRUTIL_BUF_INIT;
		char *next_raw;
		json_t *next = get_json(path, &next_raw);
		double left;

		if (!next) {
			ret = timed_out ? GATE_TIMEOUT : GATE_SERVER;
			goto out;
		}
		json_decref(doc);
		free(raw);
		doc = next;
		raw = next_raw;
		state = field_str(doc, "state", "");
		verdict = field_str(doc, "verdict", NULL);
		status_text(id, doc, &sb);
		progress_show(&p, strutil_buf_str(&sb), now_seconds() - started);
		strutil_buf_release(&sb);
		if (!strcmp(state, "done") || !strcmp(state, "failed"))
			break;
		left = deadline > 0 ? deadline - now_seconds() : POLL_SECONDS;
		if (left <= 0) {
			ret = GATE_TIMEOUT;
			goto out;
		}
		usleep((useconds_t)((left < POLL_SECONDS ? left : POLL_SECONDS) * 1e6));
	}
	ret = gate_code(state, verdict);
	if (!o->json && !strcmp(state, "done") && print_report(id, "text") != GATE_PASS)
		ret = GATE_SERVER;
out:
	if (ret == GATE_TIMEOUT)
		fprintf(stderr,
		        "locklab: submission %lld did not finish within --timeout %ld s; it goes "
		        "on on the server\n",
		        id, o->timeout);
	else if (ret != GATE_PASS && ret != GATE_SERVER)
		fprintf(stderr, "locklab: submission %lld %s%s%s: exit %d\n", id, state,
		        verdict ? " with " : "", verdict ? verdict : "", ret);
	if (o->json && raw)
		print_raw(stdout, raw);
	free(p.last);
	free(raw);
	json_decref(doc);
	return ret;
}

static int cmd_status(int argc, char **argv, const struct options *o)
{
	json_t *doc;
	char *raw = NULL, *end, path[128];
	json_t *s;
	size_t i;
	long long id = 0;

	if (argc > 1) {
		fprintf(stderr, "locklab: status takes at most one ID\n");
		return GATE_USAGE;
	}
	if (argc == 1) {
		id = strtoll(argv[0], &end, 10);
		if (*end || id <= 0) {
			fprintf(stderr, "locklab: '%s' is not a submission id\n", argv[0]);
			return GATE_USAGE;
		}
		snprintf(path, sizeof(path), "/api/v1/submissions/%lld", id);
	} else {
		snprintf(path, sizeof(path), "/api/v1/submissions");
	}
	doc = get_json(path, &raw);
	if (!doc)
		return GATE_SERVER;
	if (o->json) {
		print_raw(stdout, raw);
	} else if (argc == 1) {
		struct strutil_buf sb = STRUTIL_BUF_INIT;

		status_text(id, doc, &sb);
		fputs(strutil_buf_str(&sb), stdout);
		strutil_buf_release(&sb);
	} else {
		json_array_foreach(json_object_get(doc, "submissions"), i, s)
		{
			char sid[32];

			printf("%6s  %-8s %-13s %s\n", field_text(s, "id", sid, sizeof(sid), "?"),
			       field_str(s, "state", ""), field_str(s, "verdict", "-"),
			       field_str(s, "subject", ""));
		}
	}
	free(raw);
	json_decref(doc);
	return GATE_PASS;
}

/* One alert's change: a relative number as a percentage, a string as it is. */
static void alert_change(json_t *v, char *out, size_t len)
{
	if (json_is_number(v))
		snprintf(out, len, "%+.1f%%", json_number_value(v) * 100);
	else
		snprintf(out, len, "%s", json_is_string(v) ? json_string_value(v) : "-");
}

static int cmd_alerts(int argc, const struct options *o)
{
	static const char path[] = "/api/v1/alerts";
	struct reply r;
	json_t *doc = NULL, *list, *a;
	json_error_t jerr;
	size_t i;
	int ret = GATE_SERVER;

	if (argc != 0) {
		fprintf(stderr, "locklab: alerts takes no arguments\n");
		return GATE_USAGE;
	}
	if (request("GET", path, NULL, &r) != 0)
		return GATE_SERVER;
	if (r.status == 404 || r.status == 405) {
		fprintf(stderr,
		        "locklab: %s has no alerts: GET %s answered %ld (a server without "
		        "tracking, older than this client)\n",
		        server, path, r.status);
		goto out;
	}
	if (r.status != 200) {
		print_error(path, &r);
		goto out;
	}
	doc = json_loadb(r.data, r.len, 0, &jerr);
	list = json_object_get(doc, "alerts");
	if (!json_is_array(list)) {
		fprintf(stderr, "locklab: %s: not an {\"alerts\": [...]} document%s%s\n", path,
		        doc ? "" : ": ", doc ? "" : jerr.text);
		goto out;
	}
	ret = GATE_PASS;
	if (o->json) {
		print_raw(stdout, r.data);
		goto out;
	}
	if (!json_array_size(list)) {
		printf("no alerts\n");
		goto out;
	}
	printf("%6s  %-9s %8s  %-36s %-12s  %s\n", "ID", "STATE", "CHANGE",
	       "TREE BRANCH: WORKLOAD LOCK METRIC", "COMMIT", "SUBJECT (AUTHOR) or RANGE");
	json_array_foreach(list, i, a)
	{
		char id[32], tree_id[32], change[32], where[256];
		const char *state = field_str(a, "state", ""), *branch = field_str(a, "branch", "");
		const char *tree = field_text(a, "tree", tree_id, sizeof(tree_id), "");
		const char *workload = field_str(a, "workload", ""),
		           *lock = field_str(a, "lock", "");
		const char *metric = field_str(a, "metric", ""),
		           *commit = field_str(a, "commit", "");
		const char *subject = field_str(a, "subject", ""),
		           *author = field_str(a, "author", "");
		const char *range = field_str(a, "range", "");

		field_text(a, "id", id, sizeof(id), "?");
		alert_change(json_object_get(a, "change"), change, sizeof(change));
		snprintf(where, sizeof(where), "%s%s%s%s%s %s %s", tree, *branch ? " " : "", branch,
		         *tree || *branch ? ": " : "", workload, lock, metric);
		if (*commit)
			printf("%6s  %-9s %8s  %-36s %-12.12s  %s%s%s%s\n", id, state, change,
			       where, commit, subject, *author ? " (" : "", author,
			       *author ? ")" : "");
		else
			printf("%6s  %-9s %8s  %-36s %-12s  %s\n", id, state, change, where, "-",
			       *range ? range : "-");
	}
out:
	json_decref(doc);
	free(r.data);
	return ret;
}

/* The length of the valid UTF-8 sequence at p (n bytes left), 0 when none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		len = 2;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		len = 3;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0) ||
	    (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))
		return 0; /* overlong, a surrogate, past U+10FFFF */
	return len;
}

/*
 * A mail may hold any bytes (a Latin-1 byte in a header, a patch in another
 * charset) but a JSON string is UTF-8: each byte that is not part of valid
 * UTF-8 is taken as the Latin-1 character it would be, the rest is kept.
 */
static void latin1_repair(const struct strutil_buf *in, struct strutil_buf *out)
{
	const unsigned char *p = (const unsigned char *)strutil_buf_str(in);
	size_t n = in->len, k;

	while (n) {
		k = utf8_len(p, n);
		if (k) {
			strutil_buf_addlen(out, p, k);
		} else {
			char two[2] = {(char)(0xC0 | (p[0] >> 6)), (char)(0x80 | (p[0] & 0x3F))};

			strutil_buf_addlen(out, two, 2);
			k = 1;
		}
		p += k;
		n -= k;
	}
	if (!out->buf)
		strutil_buf_add(out, "");
}

static int cmd_submit(int argc, char **argv, const struct options *o, double started)
{
	struct strutil_buf content = STRUTIL_BUF_INIT;
	json_t *body = NULL, *doc = NULL;
	struct strutil_buf repaired = STRUTIL_BUF_INIT;
	char *text = NULL;
	struct reply r = {0};
	json_int_t id = 0, npatches = 0;
	int ret = GATE_SERVER;

	if (argc != 1) {
		fprintf(stderr, "locklab: submit takes one URL or FILE\n");
		return GATE_USAGE;
	}
	if (!strncasecmp(argv[0], "http://", 7) || !strncasecmp(argv[0], "https://", 8)) {
		body = json_pack("{s:s}", "url", argv[0]);
	} else {
		if (strutil_read_file(argv[0], &content) != 0) {
			fprintf(stderr, "locklab: %s: %s\n", argv[0], strerror(errno));
			ret = GATE_USAGE;
			goto out;
		}
		latin1_repair(&content, &repaired);
		body = json_pack("{s:s}", "mbox", strutil_buf_str(&repaired));
		if (!body) {
			fprintf(stderr, "locklab: %s: not a text mbox\n", argv[0]);
			ret = GATE_USAGE;
			goto out;
		}
	}
	if (!body)
		goto out;
	if (json_array_size(o->suites))
		json_object_set(body, "suites", o->suites);
	text = json_dumps(body, JSON_COMPACT);
	if (!text || request("POST", "/api/v1/submissions", text, &r) != 0) {
		if (timed_out) {
			fprintf(stderr, "locklab: the server did not take the submission within "
			                "--timeout\n");
			ret = GATE_TIMEOUT;
		}
		goto out;
	}
	if (r.status != 202) {
		print_error("/api/v1/submissions", &r);
		goto out;
	}
	doc = json_loadb(r.data, r.len, 0, NULL);
	if (!doc || json_unpack(doc, "{s:I, s?I}", "id", &id, "patches", &npatches) != 0) {
		fprintf(stderr, "locklab: unexpected answer: %.200s\n", r.data);
		goto out;
	}
	if (!o->wait && o->json)
		print_raw(stdout, r.data);
	else
		fprintf(o->json ? stderr : stdout, "submission %lld queued (%lld patches)\n",
		        (long long)id, (long long)npatches);
	fflush(stdout);
	ret = o->wait ? wait_for(id, o, started) : GATE_PASS;
out:
	json_decref(body);
	json_decref(doc);
	free(text);
	strutil_buf_release(&repaired);
	strutil_buf_release(&content);
	free(r.data);
	return ret;
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
	if (strncasecmp(server, "http://", 7) && strncasecmp(server, "https://", 8)) {
		fprintf(stderr, "locklab: the server '%s' is not an http:// or https:// URL\n",
		        server);
		return GATE_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
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
	const char *env = getenv("LOCKLAB_SERVER");
	struct options o = {.format = "text", .suites = json_array()};
	double started = now_seconds();
	const struct command *c;
	const char *cmd;
	char **args, *end;
	long long id = 0;
	unsigned given = 0;
	bool help = false;
	int ch, nargs, ret = GATE_USAGE;

	if (env && *env)
		server = env;
	/* GNU getopt moves the command and its arguments after the options */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			server = optarg;
			break;
		case 'w':
			o.wait = true;
			given |= OPT_WAIT;
			break;
		case 'f':
			o.format = optarg;
			given |= OPT_FORMAT;
			break;
		case 'S':
			json_array_append_new(o.suites, json_string(optarg));
			given |= OPT_SUITE;
			break;
		case 'j':
			o.json = true;
			given |= OPT_JSON;
			break;
		case 't':
			errno = 0;
			o.timeout = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o.timeout <= 0 ||
			    o.timeout > 30 * 86400) {
				fprintf(stderr,
				        "locklab: --timeout wants whole seconds, 1 to 2592000\n");
				goto out;
			}
			given |= OPT_TIMEOUT;
			break;
		case 'h':
			help = true;
			break;
		case 'V':
			version_print(stdout, "locklab");
			ret = GATE_PASS;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
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
		deadline = started + (double)o.timeout;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	conn = curl_easy_init();
	if (!conn) {
		fprintf(stderr, "locklab: cannot start libcurl\n");
		ret = GATE_SERVER;
	} else if (!strcmp(cmd, "submit")) {
		ret = cmd_submit(nargs, args, &o, started);
	} else if (!strcmp(cmd, "status")) {
		ret = cmd_status(nargs, args, &o);
	} else if (!strcmp(cmd, "alerts")) {
		ret = cmd_alerts(nargs, &o);
	} else {
		ret = print_report(id, o.format);
	}
	if (conn)
		curl_easy_cleanup(conn);
	curl_global_cleanup();
out:
	json_decref(o.suites);
	return ret;
}
