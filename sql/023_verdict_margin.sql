-- 023: the margin a verdict row was judged against: +-margin is
-- the band its interval must lie inside to be no-change (an equivalence
-- test), and a row its machine cannot resolve that moved past it keeps
-- deciding (lib/compare.h, compare_row_margin and
-- compare_row_moved).  A fraction; NULL for a row stored before this.
ALTER TABLE verdicts
	ADD COLUMN margin float8;
