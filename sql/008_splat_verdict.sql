-- 008: the `splat` verdict (DESIGN.md: between lockup and regression): a
-- kernel report (lockdep, might_sleep, WARNING, KASAN ...) that the patched
-- kernel printed and the base did not.
ALTER TABLE submissions DROP CONSTRAINT IF EXISTS submissions_verdict_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_verdict_check
	CHECK (verdict IN ('regression', 'improvement', 'no-change', 'inconclusive', 'lockup',
	                   'splat'));
