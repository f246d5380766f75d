/* sandbox.c - see sandbox.h. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spawn.h"
#include "strutil.h"

static bool unsandboxed_ok;

void sandbox_allow_unsandboxed(bool yes)
{
	unsandboxed_ok = yes;
}

int sandbox_add(const char *list[SANDBOX_MAX_PATHS], const char *path)
{
	for (int i = 0; i < SANDBOX_MAX_PATHS - 1; i++)
		if (!list[i]) {
			list[i] = path;
			list[i + 1] = NULL;
			return 0;
		}
	return -1;
}

/* The options every sandbox has, in the order bwrap applies them. */
static const char *const base_opts[] = {"--ro-bind",
                                        "/",
                                        "/",
                                        "--dev",
                                        "/dev",
                                        "--proc",
                                        "/proc",
                                        "--unshare-all",
                                        "--new-session",
                                        "--die-with-parent",
                                        "--cap-drop",
                                        "ALL",
                                        "--clearenv",
                                        NULL};

bool sandbox_available(void)
{
	static int ok = -1;
	if (ok >= 0)
		return ok;
	/* it must also work: inside some containers it is installed but refused */
	const char *argv[32];
	struct spawn_cmd c = {.argv = argv, .wall_s = 30};
	struct spawn_result r;
	char err[256];
	int k = 0;
	argv[k++] = "bwrap";
	for (int i = 0; base_opts[i]; i++)
		argv[k++] = base_opts[i];
	argv[k++] = "--tmpfs";
	argv[k++] = "/tmp";
	argv[k++] = "true";
	argv[k] = NULL;
	ok = spawn_run(&c, &r, err, sizeof(err)) == 0 && r.status == 0 && !r.timed_out;
	spawn_result_release(&r);
	return ok;
}

const char *sandbox_describe(void)
{
	if (sandbox_available())
		return "bubblewrap (read-only root, only the job's tree writable, no network, "
		       "agent folders hidden, cleared environment)";
	if (unsandboxed_ok)
		return "NO SANDBOX (bubblewrap does not work here; --allow-unsandboxed): "
		       "submitted code can read and write everything this agent can";
	return "nothing: bubblewrap does not work here, so no untrusted code will run "
	       "(--allow-unsandboxed overrides)";
}

struct strv {
	char **v;
	size_t n, cap;
};

static void strv_add(struct strv *s, const char *a)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = strutil_xreallocarray(s->v, s->cap, sizeof(char *));
	}
	s->v[s->n++] = strutil_xstrdup(a);
	s->v[s->n] = NULL;
}

static void strv_add_copy(struct strv *s, const char *const argv[])
{
	for (size_t i = 0; argv[i]; i++)
		strv_add(s, argv[i]);
}

char **sandbox_wrap(const struct sandbox_policy *p, const char *const argv[],
                    const char *const envp[], char *err, size_t errlen)
{
	struct strv s = {NULL, 0, 0};
	char size[32];
	struct stat st;

	if (!sandbox_available()) {
		if (!unsandboxed_ok) {
			strutil_errf(err, errlen,
			             "no sandbox: bubblewrap does not work on this machine and the "
			             "agent was not started with --allow-unsandboxed");
			return NULL;
		}
		strv_add_copy(&s, argv);
		return s.v;
	}
	snprintf(size, sizeof(size), "%ld", (p->tmp_mb > 0 ? p->tmp_mb : 256) << 20);
	strv_add(&s, "bwrap");
	strv_add_copy(&s, base_opts);
	strv_add_copy(&s, (const char *const[]){"--size", size, "--tmpfs", "/tmp", "--size", size,
	                                        "--tmpfs", "/dev/shm", NULL});
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->visible[i]; i++)
		strv_add_copy(
		    &s, (const char *const[]){"--ro-bind", p->visible[i], p->visible[i], NULL});
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->hidden[i]; i++) {
		if (stat(p->hidden[i], &st))
			continue; /* nothing there to hide */
		if (S_ISDIR(st.st_mode))
			strv_add_copy(&s, (const char *const[]){"--tmpfs", p->hidden[i], NULL});
		else
			strv_add_copy(&s, (const char *const[]){"--ro-bind", "/dev/null",
			                                        p->hidden[i], NULL});
	}
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->writable[i]; i++)
		strv_add_copy(
		    &s, (const char *const[]){"--bind", p->writable[i], p->writable[i], NULL});
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->readable[i]; i++)
		strv_add_copy(
		    &s, (const char *const[]){"--ro-bind", p->readable[i], p->readable[i], NULL});
	/* the empty folders over the agent's own stay empty: read-only once the binds are in */
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->hidden[i]; i++)
		if (!stat(p->hidden[i], &st) && S_ISDIR(st.st_mode))
			strv_add_copy(&s,
			              (const char *const[]){"--remount-ro", p->hidden[i], NULL});
	if (p->kvm && !access("/dev/kvm", R_OK | W_OK))
		strv_add_copy(&s,
		              (const char *const[]){"--dev-bind", "/dev/kvm", "/dev/kvm", NULL});
	/* the PATH the agent was given stays usable where the private /tmp covers it */
	const char *path = getenv("PATH");
	for (const char *q = path; q && *q;) {
		size_t l = strcspn(q, ":");
		if (l > 5 && !strncmp(q, "/tmp/", 5)) {
			char *dir = strndup(q, l);
			strv_add_copy(&s, (const char *const[]){"--ro-bind-try", dir, dir, NULL});
			free(dir);
		}
		q += l + (q[l] == ':');
	}
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		/* the agent's home and ssh agent stay outside */
		if (!eq || !strncmp(envp[i], "HOME=", 5) || !strncmp(envp[i], "SSH_AUTH_SOCK=", 14))
			continue;
		char *name = strndup(envp[i], (size_t)(eq - envp[i]));
		strv_add_copy(&s, (const char *const[]){"--setenv", name, eq + 1, NULL});
		free(name);
	}
	strv_add_copy(&s, (const char *const[]){"--setenv", "HOME", "/tmp", "--setenv", "TMPDIR",
	                                        "/tmp", "--chdir", p->chdir ? p->chdir : "/", "--",
	                                        NULL});
	strv_add_copy(&s, argv);
	return s.v;
}

char *sandbox_tail(const char *path, int n)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL, *out;
	long len;
	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	long from = len > 65536 ? len - 65536 : 0;
	fseek(f, from, SEEK_SET);
	buf = calloc(1, (size_t)(len - from) + 1);
	if (!buf || fread(buf, 1, (size_t)(len - from), f) != (size_t)(len - from)) {
		fclose(f);
		free(buf);
		return strdup("");
	}
	fclose(f);
	/* walk back n newlines */
	char *p = buf + strlen(buf);
	if (p > buf && p[-1] == '\n')
		p--;
	int lines = 0;
	while (p > buf) {
		if (p[-1] == '\n' && ++lines == n)
			break;
		p--;
	}
	out = strdup(p);
	free(buf);
	return out;
}
