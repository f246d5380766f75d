/*
 * changepoint.c - E-Divisive with means over one series (changepoint.h).
 */
#include "changepoint.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void changepoint_defaults(struct changepoint_opts *o)
{
	o->alpha = 1.0;
	o->min_size = 2;
	o->permutations = 199;
	o->max_p = 0.05;
	o->min_effect = 0.02;
	o->seed = 0x9e3779b97f4a7c15ull;
}

static double cp_dist(double a, double b, double alpha)
{
	double d = fabs(a - b);

	return alpha == 1.0 ? d : pow(d, alpha);
}

/*
 * The best split of x[0..n) with at least min values a side: its index in
 * *at and its Q, or -1 when n is too short.  As in Matteson and James, the
 * right side may end early (kappa < n), which finds a step that a later
 * step reverses.  O(n^3) with running sums: the right side grows one value
 * at a time.
 */
static double cp_best(const double *x, size_t n, size_t min, double alpha, size_t *at)
{
	double best = -1, left = 0;
	size_t t, k, i;

	*at = 0;
	if (min < 2)
		min = 2;
	if (n < 2 * min)
		return -1;
	for (t = 1; t < n; t++) {
		double between = 0, right = 0, n1 = (double)t;

		for (i = 0; i + 1 < t; i++)
			left += cp_dist(x[i], x[t - 1], alpha);
		if (t < min || t + min > n)
			continue;
		for (k = t + 1; k <= n; k++) {
			double n2 = (double)(k - t), q;

			for (i = 0; i < t; i++)
				between += cp_dist(x[i], x[k - 1], alpha);
			for (i = t; i + 1 < k; i++)
				right += cp_dist(x[i], x[k - 1], alpha);
			if (k - t < min)
				continue;
			q = n1 * n2 / (n1 + n2) *
			    (2 * between / (n1 * n2) - left / (n1 * (n1 - 1) / 2) -
			     right / (n2 * (n2 - 1) / 2));
			if (q > best) {
				best = q;
				*at = t;
			}
		}
	}
	return best;
}

double changepoint_q(const double *x, size_t n, size_t split, double alpha)
{
	double between = 0, left = 0, right = 0, n1 = (double)split, n2 = (double)(n - split);
	size_t i, j;

	if (split < 2 || split + 2 > n)
		return 0;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			double d = cp_dist(x[i], x[j], alpha);

			if (j < split)
				left += d;
			else if (i >= split)
				right += d;
			else
				between += d;
		}
	return n1 * n2 / (n1 + n2) *
	       (2 * between / (n1 * n2) - left / (n1 * (n1 - 1) / 2) - right / (n2 * (n2 - 1) / 2));
}

/* xorshift64*: a fixed sequence per seed, so a history's answer is stable. */
static uint64_t cp_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Permutation p of the best split of x[0..n), whose Q is q. */
static double cp_pvalue(const double *x, size_t n, const struct changepoint_opts *o, double q,
                        double *work, uint64_t *rng)
{
	int k, hits = 0;
	size_t i, at;

	for (k = 0; k < o->permutations; k++) {
		memcpy(work, x, n * sizeof(*x));
		for (i = n - 1; i > 0; i--) {
			size_t j = (size_t)(cp_next(rng) % (i + 1));
			double t = work[i];

			work[i] = work[j];
			work[j] = t;
		}
		if (cp_best(work, n, (size_t)o->min_size, o->alpha, &at) >= q)
			hits++;
	}
	return (hits + 1.0) / (o->permutations + 1.0);
}

static int cp_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int changepoint_find(const double *x, size_t n, const struct changepoint_opts *o,
                     struct changepoint_step *out, size_t max)
{
	/* bounds: 0, the accepted splits, n (sorted); found[k]: p and q of split k */
	size_t *bounds = calloc(n + 2, sizeof(*bounds));
	double *work = calloc(n ? n : 1, sizeof(*work)), *pq = calloc(2 * (n + 2), sizeof(*pq));
	uint64_t rng = o->seed ? o->seed : 1;
	size_t nb = 2, k, written = 0;
	int rc = -1;

	if (!bounds || !work || !pq)
		goto out;
	bounds[0] = 0;
	bounds[1] = n;
	for (;;) {
		double best = -1;
		size_t seg = 0, at = 0;

		/* the most divergent split over every segment so far */
		for (k = 0; k + 1 < nb; k++) {
			size_t a;
			double q = cp_best(x + bounds[k], bounds[k + 1] - bounds[k],
			                   (size_t)o->min_size, o->alpha, &a);

			if (q > best) {
				best = q;
				seg = k;
				at = bounds[k] + a;
			}
		}
		if (best <= 0)
			break;
		{
			double p = cp_pvalue(x + bounds[seg], bounds[seg + 1] - bounds[seg], o,
			                     best, work, &rng);

			if (p > o->max_p)
				break;
			bounds[nb] = at;
			/* p and q are kept by position: at < n */
			pq[2 * at] = p;
			pq[2 * at + 1] = best;
			nb++;
			qsort(bounds, nb, sizeof(*bounds), cp_cmp);
		}
	}
	for (k = 1; k + 1 < nb; k++) {
		size_t s = bounds[k];
		double before = stats_percentile(x + bounds[k - 1], s - bounds[k - 1], 50);
		double after = stats_percentile(x + s, bounds[k + 1] - s, 50);
		double change = before != 0 ? (after - before) / fabs(before) : 0;

		if (fabs(change) < o->min_effect || written == max)
			continue;
		out[written++] = (struct changepoint_step){.at = s,
		                                           .p = pq[2 * s],
		                                           .q = pq[2 * s + 1],
		                                           .before = before,
		                                           .after = after,
		                                           .change = change};
	}
	rc = (int)written;
out:
	free(bounds);
	free(work);
	free(pq);
	return rc;
}
