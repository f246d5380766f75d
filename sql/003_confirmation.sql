-- 003_confirmation.sql - regressions and improvements are confirmed.
--
-- When the rounds of a job find a change (a deciding row significant and big
-- enough), the job asks for --min-rounds more and the change counts only if
-- those rounds, on their own, find it again in the same direction
-- (lib/compare_verdict.c, judge_confirmed).
--
-- jobs.confirm_from: the first round of the confirmation, NULL while none
-- was asked for.  comparisons.confirm_from: the same for a stored
-- comparison, 0 when it was made without one (its legend says which).
ALTER TABLE jobs ADD COLUMN confirm_from int;
ALTER TABLE comparisons ADD COLUMN confirm_from int NOT NULL DEFAULT 0;
