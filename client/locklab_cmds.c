/*
 * locklab_cmds.c - the client's commands (locklab_internal.h): submit
 * (with --wait the CI gate: progress, then the verdict as an exit code),
 * status, report and alerts.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "locklab_internal.h"
#include "strutil.h"

#define POLL_SECONDS 2

int cl_print_report(long long id, const char *format)
{
	char path[256];
	struct reply r;

	snprintf(path, sizeof(path), "/api/v1/submissions/%lld/report?format=%s", id, format);
	if (cl_request("GET", path, NULL, &r) != 0)
		return GATE_SERVER;
	if (r.status != 200) {
		cl_print_error(path, &r);
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
	const char *state = cl_field_str(doc, "state", "?"),
	           *verdict = cl_field_str(doc, "verdict", NULL);
	const char *subject = cl_field_str(doc, "subject", ""),
	           *reason = cl_field_str(doc, "reason", NULL);
	json_t *job;
	size_t i;

	strutil_buf_addf(sb, "submission %lld: %s%s%s%s\n  %s\n", id, state, verdict ? " (" : "",
	                 verdict ? verdict : "", verdict ? ")" : "", subject);
	if (reason)
		strutil_buf_addf(sb, "  reason: %s\n", reason);
	json_array_foreach(json_object_get(doc, "jobs"), i, job)
	{
		const char *suite = cl_field_str(job, "suite", ""),
		           *jstate = cl_field_str(job, "state", "");
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
		json_t *next = cl_get_json(path, &next_raw);
		double left;

		if (!next) {
			ret = cl_timed_out ? GATE_TIMEOUT : GATE_SERVER;
			goto out;
		}
		json_decref(doc);
		free(raw);
		doc = next;
		raw = next_raw;
		state = cl_field_str(doc, "state", "");
		verdict = cl_field_str(doc, "verdict", NULL);
		status_text(id, doc, &sb);
		progress_show(&p, strutil_buf_str(&sb), cl_now_seconds() - started);
		strutil_buf_release(&sb);
		if (!strcmp(state, "done") || !strcmp(state, "failed"))
			break;
		left = cl_deadline > 0 ? cl_deadline - cl_now_seconds() : POLL_SECONDS;
		if (left <= 0) {
			ret = GATE_TIMEOUT;
			goto out;
		}
		usleep((useconds_t)((left < POLL_SECONDS ? left : POLL_SECONDS) * 1e6));
	}
	ret = gate_code(state, verdict);
	if (!o->json && !strcmp(state, "done") && cl_print_report(id, "text") != GATE_PASS)
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
		cl_print_raw(stdout, raw);
	free(p.last);
	free(raw);
	json_decref(doc);
	return ret;
}

int cmd_status(int argc, char **argv, const struct options *o)
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
	doc = cl_get_json(path, &raw);
	if (!doc)
		return GATE_SERVER;
	if (o->json) {
		cl_print_raw(stdout, raw);
	} else if (argc == 1) {
		struct strutil_buf sb = STRUTIL_BUF_INIT;

		status_text(id, doc, &sb);
		fputs(strutil_buf_str(&sb), stdout);
		strutil_buf_release(&sb);
	} else {
		json_array_foreach(json_object_get(doc, "submissions"), i, s)
		{
			char sid[32];

			printf("%6s  %-8s %-13s %s\n",
			       cl_field_text(s, "id", sid, sizeof(sid), "?"),
			       cl_field_str(s, "state", ""), cl_field_str(s, "verdict", "-"),
			       cl_field_str(s, "subject", ""));
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

int cmd_alerts(int argc, const struct options *o)
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
	if (cl_request("GET", path, NULL, &r) != 0)
		return GATE_SERVER;
	if (r.status == 404 || r.status == 405) {
		fprintf(stderr,
		        "locklab: %s has no alerts: GET %s answered %ld (a server without "
		        "tracking, older than this client)\n",
		        cl_server, path, r.status);
		goto out;
	}
	if (r.status != 200) {
		cl_print_error(path, &r);
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
		cl_print_raw(stdout, r.data);
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
		const char *state = cl_field_str(a, "state", ""),
		           *branch = cl_field_str(a, "branch", "");
		const char *tree = cl_field_text(a, "tree", tree_id, sizeof(tree_id), "");
		const char *workload = cl_field_str(a, "workload", ""),
		           *lock = cl_field_str(a, "lock", "");
		const char *metric = cl_field_str(a, "metric", ""),
		           *commit = cl_field_str(a, "commit", "");
		const char *subject = cl_field_str(a, "subject", ""),
		           *author = cl_field_str(a, "author", "");
		const char *range = cl_field_str(a, "range", "");

		cl_field_text(a, "id", id, sizeof(id), "?");
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

/* A line for each patch mail the server took but will not test (the 202's set_aside). */
static void print_set_aside(FILE *f, json_t *aside)
{
	size_t i;
	json_t *a;

	json_array_foreach(aside, i, a)
	{
		const char *why = json_string_value(json_object_get(a, "why"));
		const char *subject = json_string_value(json_object_get(a, "subject"));

		fprintf(f, "  not tested: part %lld/%lld %s: %s\n",
		        (long long)json_integer_value(json_object_get(a, "seq")),
		        (long long)json_integer_value(json_object_get(a, "total")),
		        subject ? subject : "",
		        why && !strcmp(why, "replaced") ? "an earlier copy, the later one is tested"
		                                        : "past the series' numbering");
	}
}

int cmd_submit(int argc, char **argv, const struct options *o, double started)
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
	if (o->suites.n) {
		json_t *suites = json_array();

		for (size_t i = 0; i < o->suites.n; i++)
			json_array_append_new(suites, json_string(o->suites.v[i]));
		json_object_set_new(body, "suites", suites);
	}
	text = json_dumps(body, JSON_COMPACT);
	if (!text || cl_request("POST", "/api/v1/submissions", text, &r) != 0) {
		if (cl_timed_out) {
			fprintf(stderr, "locklab: the server did not take the submission within "
			                "--timeout\n");
			ret = GATE_TIMEOUT;
		}
		goto out;
	}
	if (r.status != 202) {
		cl_print_error("/api/v1/submissions", &r);
		goto out;
	}
	doc = json_loadb(r.data, r.len, 0, NULL);
	if (!doc || json_unpack(doc, "{s:I, s?I}", "id", &id, "patches", &npatches) != 0) {
		fprintf(stderr, "locklab: unexpected answer: %.200s\n", r.data);
		goto out;
	}
	if (!o->wait && o->json)
		cl_print_raw(stdout, r.data);
	else
		fprintf(o->json ? stderr : stdout, "submission %lld queued (%lld patches)\n",
		        (long long)id, (long long)npatches);
	print_set_aside(o->json ? stderr : stdout, json_object_get(doc, "set_aside"));
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
