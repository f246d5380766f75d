-- 021: verdict rows measured in lockstep: base and patched taking
-- turns of 0.5 ms on one CPU (lockbench --lockstep, the agent's default for
-- single-thread points).  Reports say so in the legend; rows stored before
-- this read as 0.
ALTER TABLE verdicts
	ADD COLUMN lockstep_runs int NOT NULL DEFAULT 0;
