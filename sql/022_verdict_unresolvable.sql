-- 022: a verdict row this machine cannot resolve, as the job's
-- comparison marked it: from its plan, or from the job's own rounds (the
-- spread of an inconclusive row cannot fit inside its margin by the job's
-- limit: lib/roundplan.h, plan_mark_futile).  The MDE at the
-- job's limit; NULL for a row that is resolvable or was stored before this.
ALTER TABLE verdicts
	ADD COLUMN unresolvable float8;
