/*
 * mbox_series.c - the mails of an mbox made a series: split and parsed one
 * by one (mbox.c), grouped by thread and numbering (cover, parts, resends,
 * strays), and a chosen series assembled in number order.  The limits on
 * messages, parts and patch bytes are checked here.
 */
#include "mbox.h"
#include "strutil.h"

#include <gmime/gmime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct collect {
	struct mbox_mail *mails;
	size_t n, cap;
	char *err;
	size_t errlen;
	size_t seen; /* messages split off, parsed or not */
};

static struct mbox_limits limits = {MBOX_MAX_MESSAGES, MBOX_MAX_PATCHES, MBOX_MAX_PATCH_BYTES};

void mbox_set_limits(const struct mbox_limits *l)
{
	limits = *l;
}

static int collect_one(const char *raw, size_t len, void *arg)
{
	struct collect *c = arg;
	char why[160];

	if (++c->seen > limits.max_messages)
		return 1; /* past --max-mbox-messages: nothing more is parsed */
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->mails = g_realloc_n(c->mails, c->cap, sizeof(*c->mails));
	}
	memset(&c->mails[c->n], 0, sizeof(c->mails[c->n]));
	if (mbox_mail_parse(raw, len, &c->mails[c->n], why, sizeof(why)) == 0)
		c->n++;
	/* a fragment that is no message is not part of any series */
	return 0;
}

static int cmp_index(const void *a, const void *b)
{
	const struct mbox_mail *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* One series candidate: the mails of a thread (or of strays) and a version. */
struct group {
	char *key;
	int version;
	size_t first; /* where it starts in the mbox */
	bool cover, threaded;
	bool numbered; /* a member is numbered (a cover letter or n/m) */
	bool complete; /* unnumbered, or every part 1..M (M > 0) is there */
	int copy;      /* 1, 2, ...: a whole series sent again (grouping_copies) */
};

/* The candidate a message belongs to: a patch, or a cover letter (0/N). */
static bool is_candidate(const struct mbox_mail *m)
{
	return !m->is_reply && (m->diff || m->pull_url || (m->numbered && m->index == 0));
}

/* The first id of "<a> <b>" (new), or NULL. */
static char *first_id(const char *list)
{
	const char *e;

	if (!list || !(e = strchr(list, '>')))
		return NULL;
	return g_strndup(list, (size_t)(e - list + 1));
}

/*
 * Thread tops: top[i] is the earliest ancestor of i in the mbox, found
 * through In-Reply-To (else the last of References) and a hash of
 * Message-IDs: linear in the number of mails.
 */
static void thread_tops(struct mbox_mail *mails, size_t n, GHashTable *ids, size_t *top)
{
	size_t *parent = g_new(size_t, n), i;
	size_t *path = g_new(size_t, n);

	for (i = 0; i < n; i++) {
		const char *pid = mails[i].in_reply_to;
		char *last = NULL;
		gpointer v = NULL;

		if (!pid && mails[i].references) {
			const char *l = strrchr(mails[i].references, '<');

			pid = last = l ? g_strdup(l) : NULL;
		}
		parent[i] = i;
		if (pid && g_hash_table_lookup_extended(ids, pid, NULL, &v))
			parent[i] = GPOINTER_TO_SIZE(v);
		g_free(last);
		top[i] = (size_t)-1;
	}
	for (i = 0; i < n; i++) {
		size_t k = i, depth = 0, j;

		/* climb until a known top, a root, or a loop (depth > n) */
		while (top[k] == (size_t)-1 && parent[k] != k && depth < n) {
			path[depth++] = k;
			top[k] = (size_t)-2; /* on the path: a loop stops here */
			k = parent[k];
		}
		if (top[k] == (size_t)-1 || top[k] == (size_t)-2)
			top[k] = k;
		for (j = 0; j < depth; j++)
			top[path[j]] = top[k];
	}
	g_free(parent);
	g_free(path);
}

/* The series candidates of an mbox: grouping_make/grouping_release pair up. */
struct grouping {
	GHashTable *ids;  /* Message-ID -> index of its first mail (borrowed keys) */
	GHashTable *keys; /* group key -> group index (keys owned by groups) */
	size_t *top;      /* the thread top of each mail */
	size_t *gof;      /* the group of each mail, (size_t)-1 for none */
	struct group *groups;
	size_t ngroups;
};

/* A cover letter (0/N) that could head a series of total parts. */
static bool is_cover_of(const struct mbox_mail *c, int total)
{
	return !c->is_reply && !c->diff && c->numbered && c->index == 0 && c->total == total;
}

/*
 * The version mails[i] belongs to: its own, but an unversioned part under a
 * versioned cover of its numbering ("[PATCH net-next v3 0/4]" over
 * "[PATCH 1/4]", as netdev sends them) takes the cover's.
 */
static int series_version(const struct mbox_mail *mails, const struct grouping *g, size_t i)
{
	const struct mbox_mail *m = &mails[i], *top = &mails[g->top[i]];
	gpointer v;

	if (m->version != 1 || !m->numbered || m->index == 0)
		return m->version;
	if (m->in_reply_to && g_hash_table_lookup_extended(g->ids, m->in_reply_to, NULL, &v) &&
	    is_cover_of(&mails[GPOINTER_TO_SIZE(v)], m->total))
		return mails[GPOINTER_TO_SIZE(v)].version;
	if (is_cover_of(top, m->total))
		return top->version;
	return m->version;
}

/*
 * An unnumbered patch in the thread of a numbered series ("This is an
 * orphaned patch!" replying to a "[PATCH 0/2]") is no part of it: a
 * series of its own, as Patchwork makes it.
 */
static void grouping_orphans(struct mbox_mail *mails, size_t n, struct grouping *g)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct group *gr;

		if (g->gof[i] == (size_t)-1 || !mails[i].diff || mails[i].numbered ||
		    !g->groups[g->gof[i]].numbered)
			continue;
		gr = &g->groups[g->ngroups];
		gr->key = g_strdup_printf("orphan %zu", i);
		gr->version = mails[i].version;
		gr->first = i;
		gr->threaded = g->groups[g->gof[i]].threaded;
		g->gof[i] = g->ngroups++;
	}
}

/* The numbering M of each group's parts (new, g->ngroups entries). */
static int *grouping_totals(const struct mbox_mail *mails, size_t n, const struct grouping *g)
{
	int *total = g_new0(int, g->ngroups ? g->ngroups : 1);
	size_t i;

	for (i = 0; i < n; i++)
		if (g->gof[i] != (size_t)-1 && mails[i].diff && mails[i].numbered &&
		    mails[i].total > total[g->gof[i]])
			total[g->gof[i]] = mails[i].total;
	return total;
}

/* a part of a group, for grouping_copies' sort */
struct part_copy {
	size_t group, mail;
	int index;
	gint64 date; /* its Date: in seconds, 0 when unreadable */
};

static int cmp_part_copy(const void *a, const void *b)
{
	const struct part_copy *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	if (x->date != y->date)
		return x->date < y->date ? -1 : 1;
	return (x->mail > y->mail) - (x->mail < y->mail);
}

/*
 * A whole numbered series sent again in its thread or among the same
 * strays (every part 1..M twice or more, a resend without a version label)
 * is C series, C the fewest copies of a part: the copies of each part in
 * the order of their Date: (then of the mbox), the k-th to copy k and
 * later ones to the last (where they replace).  One part sent again is no
 * new series: the later copy replaces the earlier.
 */
static void grouping_copies(const struct mbox_mail *mails, size_t n, struct grouping *g)
{
	size_t ng = g->ngroups, np = 0, i, j, k;
	int *total = grouping_totals(mails, n, g), *copies = g_new0(int, ng ? ng : 1);
	size_t *base = g_new0(size_t, ng ? ng : 1), *have = g_new0(size_t, ng ? ng : 1);
	struct part_copy *pc = g_new(struct part_copy, n ? n : 1);

	for (i = 0; i < n; i++) {
		size_t gi = g->gof[i];
		GDateTime *d;

		if (gi == (size_t)-1 || !mails[i].diff || !mails[i].numbered ||
		    mails[i].index < 1 || mails[i].index > total[gi])
			continue;
		d = mails[i].date ? g_mime_utils_header_decode_date(mails[i].date) : NULL;
		pc[np++] =
		    (struct part_copy){gi, i, mails[i].index, d ? g_date_time_to_unix(d) : 0};
		if (d)
			g_date_time_unref(d);
	}
	qsort(pc, np, sizeof(*pc), cmp_part_copy);
	/* the fewest copies of any part 1..M of each group */
	for (i = 0; i < ng; i++)
		copies[i] = total[i] ? INT_MAX : 0;
	for (i = 0; i < np; i = j) {
		for (j = i; j < np && pc[j].group == pc[i].group && pc[j].index == pc[i].index; j++)
			;
		copies[pc[i].group] = MIN(copies[pc[i].group], (int)(j - i));
		have[pc[i].group]++;
	}
	for (i = 0; i < ng; i++) {
		if (have[i] != (size_t)total[i])
			copies[i] = 1; /* a part is missing: one series */
		base[i] = g->ngroups;
		for (k = 2; k <= (size_t)copies[i] && copies[i] != INT_MAX; k++) {
			struct group *ngr = &g->groups[g->ngroups++];

			*ngr = g->groups[i];
			ngr->key = g_strdup_printf("%s copy %zu", g->groups[i].key, k);
			ngr->copy = (int)k - 1;
			ngr->cover = false;
		}
	}
	for (i = 0; i < np; i = j) {
		size_t gi = pc[i].group;

		for (j = i; j < np && pc[j].group == gi && pc[j].index == pc[i].index; j++)
			if (j > i && copies[gi] > 1)
				g->gof[pc[j].mail] =
				    base[gi] + MIN(j - i, (size_t)copies[gi] - 1) - 1;
	}
	g_free(pc);
	g_free(total);
	g_free(copies);
	g_free(base);
	g_free(have);
}

/* Which groups hold every part of their numbering (a hash of parts: linear). */
static void grouping_complete(const struct mbox_mail *mails, size_t n, struct grouping *g)
{
	GHashTable *parts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	int *total = grouping_totals(mails, n, g);
	size_t *have = g_new0(size_t, g->ngroups ? g->ngroups : 1), i;

	for (i = 0; i < n; i++) {
		size_t k = g->gof[i];
		char *key;

		if (k == (size_t)-1 || !mails[i].diff || !mails[i].numbered || mails[i].index < 1 ||
		    mails[i].index > total[k])
			continue;
		key = g_strdup_printf("%zu %d", k, mails[i].index);
		if (g_hash_table_add(parts, key))
			have[k]++;
	}
	for (i = 0; i < g->ngroups; i++)
		g->groups[i].complete =
		    !g->groups[i].numbered || (total[i] && have[i] == (size_t)total[i]);
	g_hash_table_destroy(parts);
	g_free(total);
	g_free(have);
}

static void grouping_make(struct mbox_mail *mails, size_t n, struct grouping *g)
{
	size_t *children, i;

	g->ids = g_hash_table_new(g_str_hash, g_str_equal);
	g->keys = g_hash_table_new(g_str_hash, g_str_equal);
	g->ngroups = 0;
	for (i = 0; i < n; i++)
		if (mails[i].message_id && !g_hash_table_contains(g->ids, mails[i].message_id))
			g_hash_table_insert(g->ids, mails[i].message_id, GSIZE_TO_POINTER(i));
	g->top = g_new(size_t, n ? n : 1);
	g->gof = g_new(size_t, n ? n : 1);
	g->groups = g_new0(struct group, n ? n : 1);
	children = g_new0(size_t, n ? n : 1);
	thread_tops(mails, n, g->ids, g->top);
	for (i = 0; i < n; i++)
		if (is_candidate(&mails[i]) && g->top[i] != i)
			children[g->top[i]]++;

	/* every candidate into the group of its thread (or of its strays) and version */
	for (i = 0; i < n; i++) {
		const struct mbox_mail *m = &mails[i], *t = &mails[g->top[i]];
		char *root, *key;
		gpointer v;
		bool threaded = true;
		int version;

		g->gof[i] = (size_t)-1;
		if (!is_candidate(m))
			continue;
		root = first_id(t->references);
		if (!root)
			root = first_id(t->in_reply_to);
		if (!root && (g->top[i] != i || children[i]) && t->message_id)
			root = g_strdup(t->message_id);
		if (!root) {
			/* unthreaded: strays of one author and one numbering go together */
			root = g_strdup_printf("stray %s %d", m->from, m->total);
			threaded = false;
		}
		version = series_version(mails, g, i);
		key = g_strdup_printf("%s v%d", root, version);
		g_free(root);
		if (g_hash_table_lookup_extended(g->keys, key, NULL, &v)) {
			g->gof[i] = GPOINTER_TO_SIZE(v);
			g_free(key);
		} else {
			struct group *gr = &g->groups[g->ngroups];

			g->gof[i] = g->ngroups;
			gr->key = key;
			gr->version = version;
			gr->first = i;
			gr->threaded = threaded;
			g_hash_table_insert(g->keys, key, GSIZE_TO_POINTER(g->ngroups));
			g->ngroups++;
		}
		if (!m->diff)
			g->groups[g->gof[i]].cover = true;
		if (m->numbered)
			g->groups[g->gof[i]].numbered = true;
	}
	grouping_orphans(mails, n, g);
	grouping_copies(mails, n, g);
	grouping_complete(mails, n, g);
	g_free(children);
}

static void grouping_release(struct grouping *g)
{
	size_t i;

	for (i = 0; i < g->ngroups; i++)
		g_free(g->groups[i].key);
	g_free(g->groups);
	g_free(g->gof);
	g_free(g->top);
	g_hash_table_destroy(g->keys);
	g_hash_table_destroy(g->ids);
}

size_t mbox_group(struct mbox_mail *mails, size_t n, size_t *group_of)
{
	struct grouping g;
	size_t ngroups;

	grouping_make(mails, n, &g);
	memcpy(group_of, g.gof, n * sizeof(*group_of));
	ngroups = g.ngroups;
	grouping_release(&g);
	return ngroups;
}

/* A pull request (the one named, else the first) taken as the series: true. */
static bool assemble_pull(struct mbox_mail *mails, size_t n, const char *want_id,
                          struct mbox_series *out)
{
	for (size_t i = 0; i < n; i++) {
		if (!mails[i].pull_url || mails[i].is_reply ||
		    (want_id && (!mails[i].message_id || strcmp(want_id, mails[i].message_id))))
			continue;
		out->cover = g_new(struct mbox_mail, 1);
		*out->cover = mails[i];
		memset(&mails[i], 0, sizeof(mails[i]));
		out->pull_url = out->cover->pull_url;
		out->pull_ref = out->cover->pull_ref;
		out->version = out->cover->version;
		return true;
	}
	return false;
}

/*
 * Whether group a is a better pick than b: the newest version, then a
 * complete one, one with a cover, one threaded, the later copy.
 */
static bool group_better(const struct group *a, const struct group *b)
{
	if (a->version != b->version)
		return a->version > b->version;
	if (a->complete != b->complete)
		return a->complete > b->complete;
	if (a->cover != b->cover)
		return a->cover > b->cover;
	if (a->threaded != b->threaded)
		return a->threaded > b->threaded;
	return a->copy > b->copy;
}

/* The group want_id names (a reply: the newest series of its thread); -1 with err. */
static long group_named(size_t n, const struct grouping *g, const char *want_id, char *err,
                        size_t errlen)
{
	gpointer v;
	long chosen = -1;

	if (!g_hash_table_lookup_extended(g->ids, want_id, NULL, &v)) {
		strutil_errf(err, errlen, "the mbox does not hold message %s", want_id);
		return -1;
	}
	size_t w = GPOINTER_TO_SIZE(v);
	if (g->gof[w] != (size_t)-1)
		return (long)g->gof[w];
	/* a reply or review named: the newest series of its thread */
	for (size_t i = 0; i < n; i++)
		if (g->gof[i] != (size_t)-1 && g->top[i] == g->top[w] &&
		    (chosen < 0 || g->groups[g->gof[i]].version > g->groups[chosen].version))
			chosen = (long)g->gof[i];
	if (chosen < 0)
		strutil_errf(err, errlen, "no patch found in the thread of %s", want_id);
	return chosen;
}

/* The best group that holds a patch (group_better); -1 when none does. */
static long group_best(const struct mbox_mail *mails, size_t n, const struct grouping *g)
{
	long chosen = -1;
	bool any_patch = false;
	size_t i;

	for (i = 0; i < g->ngroups; i++)
		if (chosen < 0 || group_better(&g->groups[i], &g->groups[chosen]))
			chosen = (long)i;
	for (i = 0; chosen >= 0 && i < n; i++)
		any_patch = any_patch || (g->gof[i] == (size_t)chosen && mails[i].diff);
	if (any_patch)
		return chosen;
	/* only cover letters among the candidates: pick any group with a patch */
	for (i = 0; i < n; i++)
		if (g->gof[i] != (size_t)-1 && mails[i].diff)
			return (long)g->gof[i];
	return -1;
}

/* What the chosen group holds: its cover, how many diffs, whether numbered. */
struct series_shape {
	int cover;       /* the first mail without a diff, or -1 */
	size_t npatches; /* mails with a diff */
	bool numbered;   /* any of them numbered */
	int total;       /* numbered: the n of every part's k/n */
};

/*
 * The shape of group chosen; in a numbered series the unnumbered strays
 * leave the group (gof).  0, or -1 with err said.
 */
static int series_shape(const struct mbox_mail *mails, size_t n, size_t *gof, long chosen,
                        struct series_shape *sh, char *err, size_t errlen)
{
	size_t i;

	*sh = (struct series_shape){.cover = -1};
	for (i = 0; i < n; i++) {
		if (gof[i] != (size_t)chosen)
			continue;
		if (!mails[i].diff) {
			if (sh->cover < 0)
				sh->cover = (int)i;
			continue;
		}
		sh->npatches++;
		sh->numbered = sh->numbered || mails[i].numbered;
	}
	if (!sh->npatches) {
		strutil_errf(err, errlen, "no patch found: the series of %s holds no diff",
		             mails[sh->cover].message_id ? mails[sh->cover].message_id
		                                         : "its cover letter");
		return -1;
	}
	if (!sh->numbered)
		return 0;
	/* a numbered series: unnumbered strays are not part of it */
	for (i = 0; i < n; i++) {
		if (gof[i] != (size_t)chosen || !mails[i].diff)
			continue;
		if (!mails[i].numbered) {
			gof[i] = (size_t)-1;
			sh->npatches--;
			continue;
		}
		if (sh->total && mails[i].total != sh->total) {
			strutil_errf(err, errlen, "series numbering disagrees: %d/%d next to n/%d",
			             mails[i].index, mails[i].total, sh->total);
			return -1;
		}
		sh->total = mails[i].total;
	}
	if (sh->cover >= 0 && mails[sh->cover].total != sh->total) {
		strutil_errf(err, errlen, "cover letter says 0/%d but the patches say n/%d",
		             mails[sh->cover].total, sh->total);
		return -1;
	}
	return 0;
}

/* Move *m into out's mails set aside (replaced: an earlier copy); *m is zeroed. */
static void series_set_aside(struct mbox_series *out, struct mbox_mail *m, bool replaced)
{
	out->aside = g_renew(struct mbox_aside, out->aside, out->naside + 1);
	out->aside[out->naside].mail = *m;
	out->aside[out->naside].replaced = replaced;
	out->naside++;
	memset(m, 0, sizeof(*m));
}

/*
 * Move group chosen's patches into out, in order: a numbered series' stray
 * parts (3/2) are set aside, a part sent again replaces the earlier copy,
 * which is set aside too; an unnumbered one is numbered as it comes.  0, or
 * -1 with err said when a numbered part is missing.
 */
static int series_take(struct mbox_mail *mails, size_t n, const size_t *gof, long chosen,
                       const struct series_shape *sh, struct mbox_series *out, char *err,
                       size_t errlen)
{
	bool *seen = g_new0(bool, sh->numbered ? (size_t)sh->total + 1 : 1);
	int rc = 0;

	out->patches = g_new0(struct mbox_mail, sh->npatches ? sh->npatches : 1);
	for (size_t i = 0; i < n; i++) {
		if (gof[i] != (size_t)chosen || !mails[i].diff)
			continue;
		if (sh->numbered) {
			if (mails[i].index < 1 || mails[i].index > sh->total) {
				/* a stray part (3/2): set aside, the rest is the series */
				series_set_aside(out, &mails[i], false);
				continue;
			}
			if (seen[mails[i].index]) {
				/* a resend of the same part: the later copy replaces the earlier */
				size_t k;

				for (k = 0; k < out->npatches; k++)
					if (out->patches[k].index == mails[i].index)
						break;
				series_set_aside(out, &out->patches[k], true);
				out->patches[k] = mails[i];
				memset(&mails[i], 0, sizeof(mails[i]));
				continue;
			}
			seen[mails[i].index] = true;
		} else {
			mails[i].index = (int)out->npatches + 1;
			mails[i].total = (int)sh->npatches;
		}
		out->patches[out->npatches++] = mails[i];
		memset(&mails[i], 0, sizeof(mails[i]));
	}
	g_free(seen);
	qsort(out->patches, out->npatches, sizeof(*out->patches), cmp_index);
	for (int want = 1; sh->numbered && want <= sh->total && !rc; want++)
		if ((size_t)want > out->npatches || out->patches[want - 1].index != want) {
			strutil_errf(err, errlen, "series incomplete: patch %d/%d is missing", want,
			             sh->total);
			rc = -1;
		}
	return rc;
}

int mbox_assemble(struct mbox_mail *mails, size_t n, const char *want_id, struct mbox_series *out,
                  char *err, size_t errlen)
{
	struct grouping g;
	struct series_shape sh;
	int ret = -1;
	long chosen;

	grouping_make(mails, n, &g);
	if (assemble_pull(mails, n, want_id, out)) {
		ret = 0;
		goto out;
	}
	if (want_id) {
		chosen = group_named(n, &g, want_id, err, errlen);
		if (chosen < 0)
			goto out;
	} else {
		chosen = group_best(mails, n, &g);
	}
	if (chosen < 0) {
		strutil_errf(err, errlen, "no patch found: none of the %zu message(s) holds a diff",
		             n);
		goto out;
	}
	if (series_shape(mails, n, g.gof, chosen, &sh, err, errlen) ||
	    series_take(mails, n, g.gof, chosen, &sh, out, err, errlen))
		goto out;
	if (sh.cover >= 0) {
		out->cover = g_new(struct mbox_mail, 1);
		*out->cover = mails[sh.cover];
		memset(&mails[sh.cover], 0, sizeof(mails[sh.cover]));
	}
	out->version = g.groups[chosen].version;
	ret = 0;
out:
	if (ret != 0)
		mbox_series_release(out);
	grouping_release(&g);
	return ret;
}

int mbox_parse_thread(const char *buf, size_t len, const char *want_id, struct mbox_series *out,
                      char *err, size_t errlen)
{
	struct collect c = {NULL, 0, 0, err, errlen, 0};
	size_t i;
	int ret = -1, split;

	if (memchr(buf, '\0', len)) {
		strutil_errf(err, errlen, "not a text mbox: it holds NUL bytes");
		return -1;
	}
	split = mbox_split(buf, len, collect_one, &c);
	if (split == 1) {
		strutil_errf(err, errlen,
		             "the mbox holds more than %zu messages, the limit of this server "
		             "(--max-mbox-messages)",
		             limits.max_messages);
		ret = MBOX_TOO_LARGE;
		goto out;
	}
	if (split != 0) {
		strutil_errf(err, errlen, "out of memory");
		goto out;
	}
	ret = mbox_assemble(c.mails, c.n, want_id, out, err, errlen);
	if (ret == 0 && out->npatches > limits.max_patches) {
		strutil_errf(err, errlen,
		             "the series has %zu patches, more than %zu, the limit of this server "
		             "(--max-series-patches)",
		             out->npatches, limits.max_patches);
		ret = MBOX_TOO_LARGE;
	}
	for (i = 0; ret == 0 && i < out->npatches; i++) {
		size_t bytes = out->patches[i].diff ? strlen(out->patches[i].diff) : 0;
		if (bytes > limits.max_patch_bytes) {
			strutil_errf(
			    err, errlen,
			    "patch %zu is %zu bytes, more than %zu, the limit of this server "
			    "(--max-patch-bytes)",
			    i + 1, bytes, limits.max_patch_bytes);
			ret = MBOX_TOO_LARGE;
		}
	}
	if (ret == MBOX_TOO_LARGE) {
		mbox_series_release(out);
		mbox_series_init(out);
	}
out:
	for (i = 0; i < c.n; i++)
		mbox_mail_release(&c.mails[i]);
	g_free(c.mails);
	return ret;
}

int mbox_parse(const char *buf, size_t len, struct mbox_series *out, char *err, size_t errlen)
{
	return mbox_parse_thread(buf, len, NULL, out, err, errlen);
}
