-- 002_verdict_rows.sql - two facts about each verdict row.
--
-- control: the lock is one the submission did not touch (the pthread
-- baseline of a narrowed suite), measured as a live A/A.  Its row keeps its
-- own verdict but decides nothing but a lockup (lib/compare.h).
--
-- pairs: the rounds both sides ran when p comes from the paired t-test over
-- per-round means; 0 when it comes from Welch's test over pooled samples.
--
-- Rows stored before this migration were deciding rows tested by Welch.
ALTER TABLE verdicts ADD COLUMN control boolean NOT NULL DEFAULT false;
ALTER TABLE verdicts ADD COLUMN pairs int NOT NULL DEFAULT 0;
