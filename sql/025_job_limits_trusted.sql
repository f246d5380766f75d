-- 025: the round limits a job was planned with travel with it: --min-rounds
-- (the first look and the step) in jobs.min_rounds, --max-rounds in
-- jobs.max_rounds (018's column, which a plan may lower), both set when the
-- job is made.  Any server on the database then judges and bounds the
-- job's rounds by them, whatever its own options.  NULL for a job made
-- before this: the judging server's options, as before.
ALTER TABLE jobs
	ADD COLUMN IF NOT EXISTS min_rounds int;

-- A submitter whose submissions may name any notify address (POST
-- /api/v1/agents/register {"role": "submitter", "trusted": true}); others'
-- notify addresses must be the series' own people (docs/api.md).
ALTER TABLE agents
	ADD COLUMN IF NOT EXISTS trusted boolean NOT NULL DEFAULT false;
