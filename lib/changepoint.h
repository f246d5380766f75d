/*
 * changepoint.h - steps in a history series: E-Divisive with means
 * (Matteson and James 2014, "A nonparametric approach for multiple change
 * point analysis of multivariate data"), as Apache Otava (Hunter) applies it
 * to performance histories.  docs/design-notes.md says why this method and
 * these defaults.
 *
 * The series is one value per commit, oldest first.  A step is proposed, not
 * decided: the tracker confirms each one with an interleaved A/B run.
 */
#ifndef LOCKLAB_CHANGEPOINT_H
#define LOCKLAB_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

struct changepoint_opts {
	double alpha;      /* distance exponent, 0 < alpha < 2 [1] */
	int min_size;      /* fewest values on each side of a step [2] */
	int permutations;  /* of the significance test [199] */
	double max_p;      /* a split counts when its permutation p is at most this [0.05] */
	double min_effect; /* smallest relative change of the medians reported [0.02] */
	uint64_t seed;     /* of the permutations: the same series gives the same answer */
};

/* The defaults above. */
void changepoint_defaults(struct changepoint_opts *o);

struct changepoint_step {
	size_t at;     /* index of the first value after the step */
	double p;      /* permutation p-value of the split that found it */
	double q;      /* its divergence statistic */
	double before; /* median of the segment before */
	double after;  /* median of the segment after */
	double change; /* (after - before) / |before| */
};

/*
 * The divergence statistic Q of splitting x[0..n) before index split
 * (Matteson and James, eq. 4 with kappa = n): (n1 n2 / n) times the energy
 * distance of the two sides.  0 when a side has fewer than 2 values.
 */
double changepoint_q(const double *x, size_t n, size_t split, double alpha);

/*
 * Find the steps of x[0..n), in order of position, into out (at most max).
 * Splits are found one at a time (the most divergent over every segment
 * found so far) while the permutation test holds; the steps whose medians
 * differ by less than min_effect are then left out.  Returns how many were
 * written, or -1 when memory runs out.
 */
int changepoint_find(const double *x, size_t n, const struct changepoint_opts *o,
                     struct changepoint_step *out, size_t max);

#endif
