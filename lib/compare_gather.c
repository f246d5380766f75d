/*
 * compare_gather.c - the documents of both sides grouped by point
 * (compare_internal.h): each point's samples per metric and side, the
 * lockups and splats the documents report, and a row made from a point's
 * metric.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_internal.h"
#include "strutil.h"

/* Count, per key, the documents of one side that have it. */
void cmp_gather_splats(struct comparison *c, const struct lb_result *docs, size_t n, bool patched)
{
	for (size_t d = 0; d < n; d++) {
		for (size_t k = 0; k < docs[d].nsplats; k++) {
			const struct lb_splat *sp = &docs[d].splats[k];
			bool earlier = false;
			for (size_t j = 0; j < k && !earlier; j++)
				earlier = !strcmp(docs[d].splats[j].key, sp->key);
			if (earlier)
				continue; /* one document counts once */
			struct compare_splat *cs = NULL;
			for (size_t j = 0; j < c->nsplats && !cs; j++)
				if (!strcmp(c->splats[j].key, sp->key))
					cs = &c->splats[j];
			if (!cs) {
				c->splats = strutil_xreallocarray(c->splats, c->nsplats + 1,
				                                  sizeof(*c->splats));
				cs = &c->splats[c->nsplats++];
				memset(cs, 0, sizeof(*cs));
				cs->key = strutil_xstrdup(sp->key);
				cs->message = strutil_xstrdup(sp->message ? sp->message : "");
				cs->lines = strutil_xstrdup(sp->lines);
				cs->boot = strutil_xstrdup(sp->boot);
			}
			if (patched)
				cs->patched_fail++;
			else
				cs->base_fail++;
		}
	}
}

int cmp_splat_cmp(const void *a, const void *b)
{
	const struct compare_splat *x = a, *y = b;
	if (x->new_in_patched != y->new_in_patched)
		return x->new_in_patched ? -1 : 1;
	return strcmp(x->key, y->key);
}

static long long run_users(const struct lb_run *run)
{
	const struct lb_param *p = run_param(run, "users");
	if (!p || !p->is_num)
		p = run_param(run, "threads");
	return p && p->is_num ? p->num : -1;
}

static struct point *point_get(struct points *pts, const struct lb_run *run)
{
	char *key = run_params_key(run);
	struct point *pt;

	for (size_t i = 0; i < pts->n; i++) {
		pt = &pts->v[i];
		if (strcmp(pt->workload, run->workload) == 0 && strcmp(pt->lock, run->lock) == 0 &&
		    strcmp(pt->key, key) == 0) {
			free(key);
			return pt;
		}
	}
	pts->v = strutil_xreallocarray(pts->v, pts->n + 1, sizeof(*pts->v));
	pt = &pts->v[pts->n++];
	memset(pt, 0, sizeof(*pt));
	pt->workload = run->workload;
	pt->lock = run->lock;
	pt->key = key;
	pt->users = run_users(run);
	return pt;
}

static struct pmetric *pside_metric(struct pside *s, const char *name)
{
	for (size_t i = 0; i < s->nmetrics; i++)
		if (strcmp(s->metrics[i].name, name) == 0)
			return &s->metrics[i];
	return NULL;
}

static void pmetric_push(struct pmetric *m, double v, int round)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->x = strutil_xreallocarray(m->x, m->cap, sizeof(double));
		m->round = strutil_xreallocarray(m->round, m->cap, sizeof(int));
	}
	m->round[m->n] = round;
	m->x[m->n++] = v;
}

void cmp_add_run(struct points *pts, int side, const struct lb_run *run, int round)
{
	struct point *pt = point_get(pts, run);
	struct pside *s = &pt->side[side];

	s->runs++;
	if (run->lockup) {
		/* a locked-up run's figures describe a broken run: not samples */
		s->lockups++;
		if (!s->message) {
			s->message = run->lockup->message ? run->lockup->message : "";
			s->stacks = run->lockup->stacks;
		}
		return;
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct lb_metric *lm = &run->metrics[i];
		struct pmetric *m = pside_metric(s, lm->name);
		if (!m) {
			s->metrics =
			    strutil_xreallocarray(s->metrics, s->nmetrics + 1, sizeof(*s->metrics));
			m = &s->metrics[s->nmetrics++];
			memset(m, 0, sizeof(*m));
			m->name = lm->name;
			m->unit = lm->unit ? lm->unit : "";
			m->higher_better = lm->higher_better;
			m->floor = !strcmp(pt->workload, "uncontended") && !lm->higher_better;
		}
		m->runs++;
		m->duet_runs += !strcmp(metric_instrument(lm), LB_INSTRUMENT_DUET);
		m->lockstep_runs += !strcmp(metric_instrument(lm), LB_INSTRUMENT_LOCKSTEP);
		if (lm->ndisturb) {
			m->disturb_runs++;
			m->repeated += lm->repeated;
			if (lm->disturb_limit_pct > m->disturb_limit_pct)
				m->disturb_limit_pct = lm->disturb_limit_pct;
		}
		if (lm->nsamples) {
			for (size_t k = 0; k < lm->nsamples; k++)
				pmetric_push(m, lm->samples[k], round);
		} else {
			pmetric_push(m, lm->value, round);
		}
	}
}

void cmp_points_release(struct points *pts)
{
	for (size_t i = 0; i < pts->n; i++) {
		for (int s = 0; s < 2; s++) {
			for (size_t k = 0; k < pts->v[i].side[s].nmetrics; k++) {
				free(pts->v[i].side[s].metrics[k].x);
				free(pts->v[i].side[s].metrics[k].round);
			}
			free(pts->v[i].side[s].metrics);
		}
		free(pts->v[i].key);
	}
	free(pts->v);
}

struct compare_row *cmp_new_row(struct comparison *c, const struct point *pt, const char *metric,
                                const char *unit, bool higher_better)
{
	struct compare_row *r;
	const struct pside *b = &pt->side[BASE], *p = &pt->side[PATCHED];

	c->rows = strutil_xreallocarray(c->rows, c->nrows + 1, sizeof(*c->rows));
	r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	r->workload = strutil_xstrdup(pt->workload);
	r->lock = strutil_xstrdup(pt->lock);
	r->metric = strutil_xstrdup(metric);
	r->headline = compare_row_is_headline(pt->workload, metric);
	r->unit = strutil_xstrdup(unit);
	r->params_key = strutil_xstrdup(pt->key);
	r->users = pt->users;
	r->higher_better = higher_better;
	r->p = 1;
	r->q = 1;
	r->p_eq = 1;
	r->q_eq = 1;
	r->margin = compare_row_margin(metric, pt->users, &c->opts);
	r->base_runs = b->runs;
	r->patched_runs = p->runs;
	r->base_lockups = b->lockups;
	r->patched_lockups = p->lockups;
	if (p->lockups) {
		r->lockup_message = strutil_xstrdup(p->message);
		r->lockup_stacks = strutil_xstrdup(p->stacks);
	} else if (b->lockups) {
		r->lockup_message = strutil_xstrdup(b->message);
		r->lockup_stacks = strutil_xstrdup(b->stacks);
	}
	return r;
}
