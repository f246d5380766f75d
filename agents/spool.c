/*
 * spool.c - documents the server has not taken yet.  One file per document,
 * "<job>.<key>.json", written atomically; deleted only once the server
 * answered 2xx (stored, or already stored under the same idempotency key).
 * A document the server refuses (4xx) moves to spool/rejected/ so it is
 * neither lost nor retried forever.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"
#include "spool.h"
#include "strutil.h"

static int write_atomic(const char *path, const char *text)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += (size_t)w;
	}
	if (fsync(fd) || close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

int spool_put(const char *spool_dir, long long job_id, const char *key, const char *doc)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%lld.%s.json", spool_dir, job_id, key);
	if (write_atomic(path, doc)) {
		agent_log("error", job_id, "cannot spool %s: %s", path, strerror(errno));
		return -1;
	}
	agent_log("warn", job_id, "result %s spooled to %s", key, path);
	return 0;
}

int spool_flush(const char *spool_dir, struct api *api)
{
	DIR *d = opendir(spool_dir);
	struct dirent *e;
	int left = 0;
	char err[512];

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		long long job;
		char key[256], path[4096], url[128];
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".json") ||
		    sscanf(e->d_name, "%lld.%255[^/]", &job, key) != 2)
			continue;
		key[strlen(key) - 5] = 0; /* drop ".json" */
		snprintf(path, sizeof(path), "%s/%s", spool_dir, e->d_name);
		char *doc = strutil_file_text(path);
		if (!doc) {
			left++;
			continue;
		}
		json_t *reply = NULL;
		snprintf(url, sizeof(url), "/api/v1/jobs/%lld/results", job);
		long st = api_post(api, url, doc, key, &reply, err, sizeof(err));
		json_decref(reply);
		free(doc);
		if (st >= 200 && st < 300) {
			unlink(path);
			agent_log("info", job, "spooled result %s delivered", key);
		} else if (st >= 400 && st < 500 && st != 401 && st != 408 && st != 429) {
			char rej[4096];
			snprintf(rej, sizeof(rej), "%s/rejected", spool_dir);
			mkdir(rej, 0700);
			snprintf(rej, sizeof(rej), "%s/rejected/%s", spool_dir, e->d_name);
			rename(path, rej);
			agent_log("error", job, "server refused spooled result %s (%s); kept in %s",
			          key, err, rej);
		} else {
			left++;
		}
	}
	closedir(d);
	return left;
}
