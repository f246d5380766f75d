-- 020: a tree's mailing list, and what the tracker needs past its first
-- version: sampled history inside a big push, force-pushed
-- branches, and an inconclusive bisection step measured again.

-- Alert mail goes To the commit's author and Cc this list (NULL: none).
ALTER TABLE trees ADD COLUMN list text;

-- Force-pushed branches.  A head that does not descend from the last one
-- starts a new history segment: the commits still on the branch are
-- numbered again (seq goes on growing) under the new segment, the ones the
-- rewrite dropped keep their old segment.  History, change points and
-- bisection only look at the tree's current segment, so nothing is compared
-- or bisected across a rewrite.
ALTER TABLE trees ADD COLUMN track_segment int NOT NULL DEFAULT 0;
ALTER TABLE track_commits ADD COLUMN segment int NOT NULL DEFAULT 0;
CREATE TABLE track_rewrites (
	tree_id     bigint NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
	branch      text NOT NULL,
	old_head    text NOT NULL,
	new_head    text NOT NULL,
	merge_base  text,                -- NULL: the two heads share no commit
	segment     int NOT NULL,        -- the segment the new head starts
	at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX track_rewrites_tree ON track_rewrites (tree_id, at);

-- Sampling: after a push of many commits the newest head runs first, then
-- (while no job waits) the middle of the widest gap of the history, up to
-- --track-samples runs per new head: track_sampled counts them.
ALTER TABLE trees ADD COLUMN track_sampled int NOT NULL DEFAULT 0;
ALTER TABLE track_runs DROP CONSTRAINT track_runs_purpose_check;
ALTER TABLE track_runs ADD CONSTRAINT track_runs_purpose_check
	CHECK (purpose IN ('head', 'sample', 'confirm', 'bisect'));

-- An inconclusive bisection step is measured once more (attempt 1, with
-- --max-rounds from the start); the pair is unique per attempt.
ALTER TABLE track_runs ADD COLUMN attempt int NOT NULL DEFAULT 0;
ALTER TABLE track_runs DROP CONSTRAINT track_runs_tree_id_branch_base_commit_commit_key;
ALTER TABLE track_runs ADD CONSTRAINT track_runs_pair
	UNIQUE (tree_id, branch, base_commit, commit, attempt);
-- the first run's verdict when the step was measured again
ALTER TABLE bisect_steps ADD COLUMN first_verdict text;
