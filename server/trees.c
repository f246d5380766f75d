/*
 * trees.c - GET and POST /api/v1/trees: the kernel trees submissions are
 * tested against, and the checks of what a client says about one (its
 * name, its list address, its suites).  Following a tree's branch is
 * track.c; the read-only views are views.c.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "codesource.h"
#include "config.h"
#include "db.h"
#include "refname.h"
#include "url.h"

enum handler_rc api_tree_list(struct http_request *req)
{
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('trees', coalesce(json_agg(json_build_object('id', id, "
	    "'name', name, 'url', url_public(url), 'branch', branch, 'kind', kind, 'created', "
	    "created, 'track', track, 'since', track_since, 'head', track_head, 'suites', "
	    "track_suites, 'checked', track_checked, 'error', track_error, 'list', list, "
	    "'segment', track_segment, 'rewrites', (SELECT coalesce(json_agg(json_build_object("
	    "'branch', w.branch, 'old_head', w.old_head, 'new_head', w.new_head, 'merge_base', "
	    "w.merge_base, 'segment', w.segment, 'at', w.at) ORDER BY w.at), '[]') FROM "
	    "track_rewrites w WHERE w.tree_id = trees.id)) ORDER BY id), '[]')) FROM trees",
	    0, NULL, "trees");
}

/* A list address: one addr-spec ("linux-locks@example.org"), nothing a header could carry more in.
 */
static bool trees_list_ok(const char *s)
{
	const char *at = strchr(s, '@');
	size_t n = strlen(s), i;

	if (n < 3 || n > 254 || !at || at == s || !at[1] || strchr(at + 1, '@'))
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f ||
		    strchr("<>,;:\"()[]\\", s[i]))
			return false;
	return true;
}

/* A JSON list of suite names as a text[] literal "{a,b}" into out; 0 or -1. */
static int trees_suites_literal(json_t *list, char *out, size_t len)
{
	size_t i, used = 1, n = json_is_array(list) ? json_array_size(list) : 0;

	if (n == 0 || n > 16)
		return -1;
	snprintf(out, len, "{");
	for (i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(list, i)), *q;

		if (!s || !*s || strlen(s) > 32)
			return -1;
		for (q = s; *q; q++)
			if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '-')
				return -1;
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", s);
		if (used + 2 >= len)
			return -1;
	}
	snprintf(out + used, len - used, "}");
	return 0;
}

enum handler_rc api_tree_create(struct http_request *req)
{
	const char *name, *url, *branch = "master", *kind = "native", *since = NULL, *list = NULL;
	char err[256], suites[512] = "{smoke}";
	int track = 0;
	json_t *doc, *jsuites = NULL;
	json_error_t jerr;
	PGconn *c;
	PGresult *res;
	enum handler_rc rc;

	doc = http_body_json(req);
	if (!doc)
		return HANDLER_HANDLED;
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s:s, s?s, s?s, s?b, s?s, s?o, s?s}",
	                   "name", &name, "url", &url, "branch", &branch, "kind", &kind, "track",
	                   &track, "since", &since, "suites", &jsuites, "list", &list) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	if (list && !trees_list_ok(list)) {
		rc = http_reply_error(req, 400, "invalid",
		                      "list: one mail address (\"linux-locks@example.org\")");
		goto out;
	}
	if (since && !api_git_ref_ok(since)) {
		rc = http_reply_error(req, 400, "invalid", "since: a git revision");
		goto out;
	}
	if (jsuites && trees_suites_literal(jsuites, suites, sizeof(suites)) != 0) {
		rc = http_reply_error(
		    req, 400, "invalid",
		    "suites: a list of 1 to 16 suite names (smoke, quick, full, ...)");
		goto out;
	}
	if (strcmp(kind, "native") != 0 && strcmp(kind, "kernel") != 0) {
		rc = http_reply_error(req, 400, "invalid", "kind: native or kernel");
		goto out;
	}
	if (!api_tree_name_ok(name)) {
		rc = http_reply_error(req, 400, "invalid", "name: %s", API_TREE_NAME_RULE);
		goto out;
	}
	if (!api_git_ref_ok(branch)) {
		rc = http_reply_error(req, 400, "invalid", "branch: a git branch name");
		goto out;
	}
	/* the agents fetch what the same rule lets through (codesource.h) */
	switch (codesource_check(url, NULL, srv_cfg.allow_local_trees, err, sizeof(err))) {
	case CODESOURCE_REFUSED:
		rc = http_reply_error(req, 400, "bad-url", "url: '%.300s' %s", url, err);
		goto out;
	case CODESOURCE_NETWORK:
		if (url_check(url, URL_HTTP | URL_GIT | URL_SSH, err, sizeof(err)) != 0) {
			rc = http_reply_error(req, 400, "bad-url", "url: %s", err);
			goto out;
		}
		break;
	case CODESOURCE_LOCAL:
		break;
	}
	c = db_conn();
	if (!c) {
		rc = api_reply_db_error(req, "cannot store the tree");
		goto out;
	}
	{
		const char *p[8] = {name,  url,    branch, kind, track ? "t" : "f",
		                    since, suites, list};

		res = db_exec(c,
		              "INSERT INTO trees (name, url, branch, kind, track, track_since, "
		              "track_suites, list) VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8) "
		              "ON CONFLICT (name) DO NOTHING RETURNING id",
		              8, p);
	}
	if (!res) {
		rc = api_reply_db_error(req, "cannot store the tree");
		goto out;
	}
	if (PQntuples(res) == 0)
		rc = http_reply_error(req, 409, "conflict", "a tree named '%s' exists", name);
	else
		rc = http_reply_json(req, 201,
		                     json_pack("{s:I, s:s, s:s, s:s, s:s, s:b, s:s?, s:s?}", "id",
		                               (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10),
		                               "name", name, "url", url, "branch", branch, "kind",
		                               kind, "track", track, "since", since, "list", list));
	PQclear(res);
out:
	json_decref(doc);
	return rc;
}
