/* sandbox.c - see sandbox.h. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "childenv.h"
#include "procrun.h"
#include "strutil.h"

static bool unsandboxed_ok;
static uid_t sandbox_uid = 65534; /* nobody */
static gid_t sandbox_gid = 65534; /* nogroup */

void sandbox_allow_unsandboxed(bool yes)
{
	unsandboxed_ok = yes;
}

void sandbox_set_user(uid_t uid, gid_t gid)
{
	sandbox_uid = uid;
	sandbox_gid = gid;
}

bool sandbox_drops_root(uid_t *uid, gid_t *gid)
{
	if (geteuid() != 0 || !sandbox_available())
		return false;
	*uid = sandbox_uid;
	*gid = sandbox_gid;
	return true;
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

/* The options every sandbox has, in the order bwrap applies them: the mounts, then these. */
static const char *const mount_opts[] = {"--ro-bind", "/",      "/",     "--dev",
                                         "/dev",      "--proc", "/proc", NULL};
static const char *const base_opts[] = {
    "--unshare-all", "--new-session", "--die-with-parent", "--cap-drop", "ALL", "--clearenv", NULL};

/*
 * An agent run as root: bwrap (root, so that it can bind what the agent can
 * reach) keeps only what setpriv needs to become the sandbox's user, and
 * setpriv drops those too before the command starts.  No user namespace
 * here: uid 0 inside one is still root to the files outside.
 */
static const char *const root_opts[] = {"--unshare-ipc",
                                        "--unshare-pid",
                                        "--unshare-net",
                                        "--unshare-uts",
                                        "--unshare-cgroup-try",
                                        "--new-session",
                                        "--die-with-parent",
                                        "--cap-drop",
                                        "ALL",
                                        "--cap-add",
                                        "CAP_SETUID",
                                        "--cap-add",
                                        "CAP_SETGID",
                                        "--cap-add",
                                        "CAP_SETPCAP",
                                        "--clearenv",
                                        NULL};

/* Private places of the host, hidden from every sandbox (bound back when asked). */
static const char *const private_dirs[] = {"/root", "/home", NULL};
static const char *const private_files[] = {"/etc/shadow", "/etc/gshadow", "/etc/shadow-",
                                            "/etc/gshadow-", NULL};

bool sandbox_available(void)
{
	static int ok = -1;
	if (ok >= 0)
		return ok;
	/* it must also work: inside some containers it is installed but refused */
	const char *argv[48];
	const char *const *opts = geteuid() == 0 ? root_opts : base_opts;
	char **envp = childenv_make(NULL), err[256];
	int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	/* as spawn.c runs a trusted command: its own group, output to /dev/null */
	struct procrun_cmd c = {.argv = argv,
	                        .envp = (const char *const *)envp,
	                        .out_fd = null_fd,
	                        .err_fd = null_fd,
	                        .wall_s = 30,
	                        .own_group = true,
	                        .linger_ms = 5000};
	struct procrun_result r = {0};
	int k = 0;
	argv[k++] = "bwrap";
	for (int i = 0; mount_opts[i]; i++)
		argv[k++] = mount_opts[i];
	for (int i = 0; opts[i]; i++)
		argv[k++] = opts[i];
	argv[k++] = "--perms"; /* as the command's own sandbox has it */
	argv[k++] = "1777";
	argv[k++] = "--tmpfs";
	argv[k++] = "/tmp";
	if (opts == root_opts) {
		const char *drop[] = {"setpriv",
		                      "--reuid=65534",
		                      "--regid=65534",
		                      "--clear-groups",
		                      "--inh-caps=-all",
		                      "--bounding-set=-all",
		                      "--no-new-privs",
		                      "--",
		                      NULL};
		for (int i = 0; drop[i]; i++)
			argv[k++] = drop[i];
	}
	argv[k++] = "true";
	argv[k] = NULL;
	ok =
	    null_fd >= 0 && procrun(&c, &r, err, sizeof(err)) == 0 && r.status == 0 && !r.timed_out;
	procrun_result_release(&r);
	if (null_fd >= 0)
		close(null_fd);
	childenv_free(envp);
	return ok;
}

const char *sandbox_describe(void)
{
	if (sandbox_available() && geteuid() == 0)
		return "bubblewrap as the sandbox's own unprivileged user (read-only root, only "
		       "the job's tree writable, no network, agent folders, /root and /home "
		       "hidden, cleared environment)";
	if (sandbox_available())
		return "bubblewrap in a user namespace (read-only root, only the job's tree "
		       "writable, no network, agent folders, /root and /home hidden, cleared "
		       "environment)";
	if (unsandboxed_ok)
		return "NO SANDBOX (bubblewrap does not work here; --allow-unsandboxed): "
		       "submitted code can read and write everything this agent can";
	return "nothing: bubblewrap does not work here, so no untrusted code will run "
	       "(--allow-unsandboxed overrides)";
}

/*
 * Where the PATH entry q (l bytes) lies: PATH_HIDDEN under a folder the
 * sandbox hides (/root, /home, the agent's home), PATH_TMP under /tmp (the
 * sandbox's own tmpfs covers it), else PATH_SYSTEM.
 */
enum path_place { PATH_SYSTEM, PATH_TMP, PATH_HIDDEN };

static enum path_place path_place(const char *q, size_t l, const char *home)
{
	const char *hidden[] = {"/root/", "/home/", NULL};
	for (int i = 0; hidden[i]; i++)
		if (l > strlen(hidden[i]) && !strncmp(q, hidden[i], strlen(hidden[i])))
			return PATH_HIDDEN;
	size_t hl = home ? strlen(home) : 0;
	if (hl > 1 && l > hl && !strncmp(q, home, hl) && q[hl] == '/')
		return PATH_HIDDEN;
	return l > 5 && !strncmp(q, "/tmp/", 5) ? PATH_TMP : PATH_SYSTEM;
}

/*
 * The agent's PATH less the entries under a folder the sandbox hides (a
 * tool installed under /root or a home, such as a version manager's shims,
 * would run there without the rest of its folder): a new string, the
 * system's folders when nothing is left.
 */
static char *sandbox_path(const char *path, const char *home)
{
	struct strutil_buf b = STRUTIL_BUF_INIT;
	for (const char *q = path; q && *q;) {
		size_t l = strcspn(q, ":");
		if (l && path_place(q, l, home) != PATH_HIDDEN)
			strutil_buf_addf(&b, "%s%.*s", b.len ? ":" : "", (int)l, q);
		q += l + (q[l] == ':');
	}
	if (!b.len)
		strutil_buf_addf(&b, "/usr/local/bin:/usr/bin:/bin");
	return strutil_buf_detach(&b);
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

/*
 * A bind of path, preceded (when root is dropped) by --dir for each of its
 * folders: bwrap makes the ones missing under a tmpfs 0700, which the
 * sandbox's user could not enter.
 */
static void add_bind(struct strv *s, bool root, const char *how, const char *path)
{
	if (root) {
		char *dir = strutil_xstrdup(path);
		for (char *q = strchr(dir + 1, '/'); q; q = strchr(q + 1, '/')) {
			*q = 0;
			strv_add_copy(s, (const char *const[]){"--dir", dir, NULL});
			*q = '/';
		}
		free(dir);
	}
	strv_add_copy(s, (const char *const[]){how, path, path, NULL});
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
	bool root = geteuid() == 0;
	snprintf(size, sizeof(size), "%ld", (p->tmp_mb > 0 ? p->tmp_mb : 256) << 20);
	strv_add(&s, "bwrap");
	strv_add_copy(&s, mount_opts);
	strv_add_copy(&s, root ? root_opts : base_opts);
	/* 1777: as root the command runs as --sandbox-user, who must write its /tmp */
	strv_add_copy(&s, (const char *const[]){"--perms", "1777", "--size", size, "--tmpfs",
	                                        "/tmp", "--perms", "1777", "--size", size,
	                                        "--tmpfs", "/dev/shm", NULL});
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->visible[i]; i++)
		add_bind(&s, root, "--ro-bind", p->visible[i]);
	const char *home = getenv("HOME");
	for (int i = 0; private_dirs[i]; i++)
		if (!stat(private_dirs[i], &st) && S_ISDIR(st.st_mode))
			strv_add_copy(&s, (const char *const[]){"--tmpfs", private_dirs[i], NULL});
	if (home && home[0] == '/' && strcmp(home, "/") && !stat(home, &st) && S_ISDIR(st.st_mode))
		strv_add_copy(&s, (const char *const[]){"--tmpfs", home, NULL});
	for (int i = 0; private_files[i]; i++)
		if (!stat(private_files[i], &st) && S_ISREG(st.st_mode))
			strv_add_copy(&s, (const char *const[]){"--ro-bind", "/dev/null",
			                                        private_files[i], NULL});
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
		add_bind(&s, root, "--bind", p->writable[i]);
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->readable[i]; i++)
		add_bind(&s, root, "--ro-bind", p->readable[i]);
	/* the empty folders over the agent's own stay empty: read-only once the binds are in */
	for (int i = 0; i < SANDBOX_MAX_PATHS && p->hidden[i]; i++)
		if (!stat(p->hidden[i], &st) && S_ISDIR(st.st_mode))
			strv_add_copy(&s,
			              (const char *const[]){"--remount-ro", p->hidden[i], NULL});
	bool kvm = p->kvm && !access("/dev/kvm", R_OK | W_OK);
	if (kvm)
		strv_add_copy(&s,
		              (const char *const[]){"--dev-bind", "/dev/kvm", "/dev/kvm", NULL});
	/* a PATH entry under /tmp (the sandbox's own tmpfs) stays usable, read-only */
	const char *path = getenv("PATH");
	for (const char *q = path; q && *q;) {
		size_t l = strcspn(q, ":");
		if (path_place(q, l, home) == PATH_TMP) {
			char *dir = strndup(q, l);
			if (!stat(dir, &st))
				add_bind(&s, root, "--ro-bind", dir);
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
		char *value =
		    strcmp(name, "PATH") ? strutil_xstrdup(eq + 1) : sandbox_path(eq + 1, home);
		strv_add_copy(&s, (const char *const[]){"--setenv", name, value, NULL});
		free(value);
		free(name);
	}
	strv_add_copy(&s, (const char *const[]){"--setenv", "HOME", "/tmp", "--setenv", "TMPDIR",
	                                        "/tmp", "--chdir", p->chdir ? p->chdir : "/", "--",
	                                        NULL});
	if (root) {
		/* the sandbox's user, no groups but /dev/kvm's for qemu, no capability left */
		char ru[32], rg[32], groups[48];
		snprintf(ru, sizeof(ru), "--reuid=%u", (unsigned)sandbox_uid);
		snprintf(rg, sizeof(rg), "--regid=%u", (unsigned)sandbox_gid);
		strv_add_copy(&s, (const char *const[]){"setpriv", ru, rg, NULL});
		if (kvm && !stat("/dev/kvm", &st)) {
			snprintf(groups, sizeof(groups), "--groups=%u", (unsigned)st.st_gid);
			strv_add(&s, groups);
		} else {
			strv_add(&s, "--clear-groups");
		}
		strv_add_copy(&s, (const char *const[]){"--inh-caps=-all", "--bounding-set=-all",
		                                        "--no-new-privs", "--", NULL});
	}
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
