-- 024: whether a verdict row moved past its margin: a row its
-- machine cannot resolve decides nothing while its change lies inside its
-- margin, and keeps the job looking when it moved past it
-- (lib/compare.h, compare_row_moved; never a control's).  Stored
-- as the comparison decided it, so that the dashboard says what the text
-- report and the reply said rather than working it out again.  NULL for a
-- row stored before this.
ALTER TABLE verdicts
	ADD COLUMN moved boolean;
