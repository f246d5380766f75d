-- 002_controls.sql - control rows: a lock the submission did not touch
-- (the pthread baseline of a narrowed suite) is measured as a live A/A.
-- Its rows keep their own verdict but decide nothing but a lockup
-- (lockbench/lib/compare.h).  Rows stored before this migration were all
-- deciding rows.
ALTER TABLE verdicts ADD COLUMN control boolean NOT NULL DEFAULT false;
