/*
 * locklab.c - the command-line client of locklab-server:
 *   locklab submit URL|FILE [--wait] [--suite S]... [--server URL]
 *   locklab status [ID] [--server URL]
 *   locklab report ID [--format aim7|perf|lkp|text] [--server URL]
 * The server defaults to $LOCKLAB_SERVER, else http://127.0.0.1:8080.
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
#include <unistd.h>

#include "strutil.h"

#define MAX_REPLY (64u << 20)

struct reply {
	char *data;
	size_t len;
	long status;
};

static const char *server = "http://127.0.0.1:8080";

static void usage(FILE *out)
{
	fprintf(out, "usage: locklab submit URL|FILE [--wait] [--suite NAME]... [--server URL]\n"
	             "       locklab status [ID] [--server URL]\n"
	             "       locklab report ID [--format aim7|perf|lkp|text] [--server URL]\n"
	             "the server is --server, else $LOCKLAB_SERVER, else http://127.0.0.1:8080\n");
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

/* One request; 0 with r filled (any HTTP status), or -1 after a message. */
static int request(const char *method, const char *path, const char *body, struct reply *r)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = NULL;
	char url[4096], err[CURL_ERROR_SIZE] = "";
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (!h) {
		fprintf(stderr, "locklab: cannot start libcurl\n");
		return -1;
	}
	snprintf(url, sizeof(url), "%s%s", server, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 300L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		fprintf(stderr, "locklab: %s: %s\n", url, err[0] ? err : curl_easy_strerror(rc));
		free(r->data);
		r->data = NULL;
		return -1;
	}
	if (!r->data) {
		r->data = strdup("");
		if (!r->data)
			return -1;
	}
	return 0;
}

/* Print the server's {"error","detail"} (or the raw body) for a failed call. */
static void print_error(const struct reply *r)
{
	json_t *doc = json_loadb(r->data, r->len, 0, NULL);
	const char *e = NULL, *d = NULL;

	if (doc && json_unpack(doc, "{s:s, s:s}", "error", &e, "detail", &d) == 0)
		fprintf(stderr, "locklab: server said %ld %s: %s\n", r->status, e, d);
	else
		fprintf(stderr, "locklab: server said %ld: %.200s\n", r->status, r->data);
	json_decref(doc);
}

/* GET path as JSON; NULL after a message. */
static json_t *get_json(const char *path)
{
	struct reply r;
	json_t *doc;
	json_error_t jerr;

	if (request("GET", path, NULL, &r) != 0)
		return NULL;
	if (r.status != 200) {
		print_error(&r);
		free(r.data);
		return NULL;
	}
	doc = json_loadb(r.data, r.len, 0, &jerr);
	if (!doc)
		fprintf(stderr, "locklab: %s: not JSON: %s\n", path, jerr.text);
	free(r.data);
	return doc;
}

/* The whole file (caller frees), or NULL after a message. */
static char *read_file(const char *path)
{
	char *text = strutil_file_text(path);

	if (!text)
		fprintf(stderr, "locklab: %s: %s\n", path, strerror(errno));
	return text;
}

static int print_report(long long id, const char *format)
{
	char path[256];
	struct reply r;

	snprintf(path, sizeof(path), "/api/v1/submissions/%lld/report?format=%s", id, format);
	if (request("GET", path, NULL, &r) != 0)
		return 1;
	if (r.status != 200) {
		print_error(&r);
		free(r.data);
		return 1;
	}
	fwrite(r.data, 1, r.len, stdout);
	free(r.data);
	return 0;
}

/* "submission N: state (verdict)" and its jobs; the state in *state_out. */
static int print_status(long long id, char *state_out, size_t len)
{
	char path[128];
	json_t *doc, *jobs, *job;
	const char *state = "?", *verdict = NULL, *subject = "", *reason = NULL;
	size_t i;

	snprintf(path, sizeof(path), "/api/v1/submissions/%lld", id);
	doc = get_json(path);
	if (!doc)
		return 1;
	json_unpack(doc, "{s?s, s?s, s?s, s?s}", "state", &state, "verdict", &verdict, "subject",
	            &subject, "reason", &reason);
	printf("submission %lld: %s%s%s%s\n  %s\n", id, state, verdict ? " (" : "",
	       verdict ? verdict : "", verdict ? ")" : "", subject);
	if (reason)
		printf("  reason: %s\n", reason);
	jobs = json_object_get(doc, "jobs");
	json_array_foreach(jobs, i, job)
	{
		const char *suite = "", *jstate = "";
		json_int_t jid = 0, rounds = 0, complete = 0;
		/* verdict and confirm_from are null until set: read them apart */
		json_t *jverdict = json_object_get(job, "verdict");
		json_t *confirm = json_object_get(job, "confirm_from");
		char confirming[96] = "";

		json_unpack(job, "{s?I, s?s, s?s, s?I, s?I}", "id", &jid, "suite", &suite, "state",
		            &jstate, "rounds", &rounds, "rounds_complete", &complete);
		if (json_is_integer(confirm) && strcmp(jstate, "running") == 0)
			snprintf(confirming, sizeof(confirming),
			         ", confirming a change from round %lld",
			         (long long)json_integer_value(confirm));
		printf("  job %lld %s: %s, %lld/%lld rounds%s%s%s\n", (long long)jid, suite, jstate,
		       (long long)complete, (long long)rounds, confirming,
		       json_is_string(jverdict) ? ", " : "",
		       json_is_string(jverdict) ? json_string_value(jverdict) : "");
	}
	if (state_out)
		snprintf(state_out, len, "%s", state);
	json_decref(doc);
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	json_t *doc, *list, *s;
	size_t i;
	char *end;
	long long id;

	if (argc > 1) {
		fprintf(stderr, "locklab: status takes at most one ID\n");
		return 2;
	}
	if (argc == 1) {
		id = strtoll(argv[0], &end, 10);
		if (*end || id <= 0) {
			fprintf(stderr, "locklab: '%s' is not a submission id\n", argv[0]);
			return 2;
		}
		return print_status(id, NULL, 0);
	}
	doc = get_json("/api/v1/submissions");
	if (!doc)
		return 1;
	list = json_object_get(doc, "submissions");
	json_array_foreach(list, i, s)
	{
		json_int_t sid = 0;
		const char *state = "", *verdict = NULL, *subject = "";

		json_unpack(s, "{s?I, s?s, s?s, s?s}", "id", &sid, "state", &state, "verdict",
		            &verdict, "subject", &subject);
		printf("%6lld  %-8s %-13s %s\n", (long long)sid, state, verdict ? verdict : "-",
		       subject);
	}
	json_decref(doc);
	return 0;
}

static int cmd_submit(int argc, char **argv, bool wait, json_t *suites)
{
	json_t *body = NULL, *doc = NULL;
	char *text = NULL, *content = NULL;
	struct reply r = {0};
	json_int_t id = 0, npatches = 0;
	int ret = 1;

	if (argc != 1) {
		fprintf(stderr, "locklab: submit takes one URL or FILE\n");
		return 2;
	}
	if (!strncasecmp(argv[0], "http://", 7) || !strncasecmp(argv[0], "https://", 8)) {
		body = json_pack("{s:s}", "url", argv[0]);
	} else {
		content = read_file(argv[0]);
		if (!content)
			goto out;
		body = json_pack("{s:s}", "mbox", content);
		if (!body) {
			fprintf(stderr, "locklab: %s: not UTF-8 text\n", argv[0]);
			goto out;
		}
	}
	if (!body)
		goto out;
	if (json_array_size(suites))
		json_object_set(body, "suites", suites);
	text = json_dumps(body, JSON_COMPACT);
	if (!text || request("POST", "/api/v1/submissions", text, &r) != 0)
		goto out;
	if (r.status != 202) {
		print_error(&r);
		goto out;
	}
	doc = json_loadb(r.data, r.len, 0, NULL);
	if (!doc || json_unpack(doc, "{s:I, s?I}", "id", &id, "patches", &npatches) != 0) {
		fprintf(stderr, "locklab: unexpected answer: %.200s\n", r.data);
		goto out;
	}
	printf("submission %lld queued (%lld patches)\n", (long long)id, (long long)npatches);
	fflush(stdout);
	ret = 0;
	if (wait) {
		char state[32] = "";

		for (;;) {
			if (print_status(id, state, sizeof(state)) != 0) {
				ret = 1;
				break;
			}
			if (!strcmp(state, "done")) {
				ret = print_report(id, "text");
				break;
			}
			if (!strcmp(state, "failed")) {
				ret = 1;
				break;
			}
			fflush(stdout);
			sleep(2);
		}
	}
out:
	json_decref(body);
	json_decref(doc);
	free(text);
	free(content);
	free(r.data);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"server", required_argument, NULL, 's'}, {"wait", no_argument, NULL, 'w'},
	    {"format", required_argument, NULL, 'f'}, {"suite", required_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *env = getenv("LOCKLAB_SERVER");
	const char *format = "text", *cmd;
	json_t *suites = json_array();
	bool wait = false;
	char **args;
	int c, nargs, ret = 2;

	if (env && *env)
		server = env;
	/* GNU getopt moves the command and its arguments after the options */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			server = optarg;
			break;
		case 'w':
			wait = true;
			break;
		case 'f':
			format = optarg;
			break;
		case 'S':
			json_array_append_new(suites, json_string(optarg));
			break;
		case 'h':
			usage(stdout);
			ret = 0;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		goto out;
	}
	cmd = argv[optind];
	args = argv + optind + 1;
	nargs = argc - optind - 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!strcmp(cmd, "submit")) {
		ret = cmd_submit(nargs, args, wait, suites);
	} else if (!strcmp(cmd, "status")) {
		ret = cmd_status(nargs, args);
	} else if (!strcmp(cmd, "report")) {
		char *end = NULL;
		long long id = nargs == 1 ? strtoll(args[0], &end, 10) : 0;

		if (nargs != 1 || *end || id <= 0) {
			fprintf(stderr, "locklab: report takes one submission ID\n");
			ret = 2;
		} else {
			ret = print_report(id, format);
		}
	} else {
		fprintf(stderr, "locklab: unknown command '%s'\n", cmd);
		usage(stderr);
	}
	curl_global_cleanup();
out:
	json_decref(suites);
	return ret;
}
