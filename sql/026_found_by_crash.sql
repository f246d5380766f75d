-- 026: how an alert's step was found, and the `crash` verdict.
--
-- found_by: 'ab-head' or 'ab-sample' when the interleaved A/B of a head or
-- sample run itself ended `regression` on a headline row (a confirmed step
-- between its two commits, alerted at once and bisected inside that range),
-- 'changepoint' when E-Divisive proposed it in the history and a confirming
-- A/B agreed (every alert before this one).
ALTER TABLE alerts
	ADD COLUMN found_by text NOT NULL DEFAULT 'changepoint'
	CHECK (found_by IN ('ab-head', 'ab-sample', 'changepoint'));

-- `crash` (ranked with lockup and splat): the patched lockbench died by a
-- signal, or exited with a sanitizer's report, where the base ran clean.
ALTER TABLE submissions DROP CONSTRAINT IF EXISTS submissions_verdict_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_verdict_check
	CHECK (verdict IN ('regression', 'improvement', 'no-change', 'inconclusive', 'lockup',
	                   'splat', 'crash'));
