-- 025: the round limits a job was planned with travel with it: --min-rounds
-- (the first look and the step) in jobs.min_rounds, --max-rounds in
-- jobs.max_rounds (018's column, which a plan may lower), both set when the
-- job is made.  Any server on the database then judges and bounds the
-- job's rounds by them, whatever its own options.  NULL for a job made
-- before this: the judging server's options, as before.
ALTER TABLE jobs
	ADD COLUMN IF NOT EXISTS min_rounds int;
