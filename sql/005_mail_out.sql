-- 005_mail_out.sql - replies that thread and are sent.
--
-- patches: what the reply needs from the mail it answers, as the headers
-- were sent (unfolded; NULL when the submission did not come as mail or
-- was stored before this migration): mail_references is the mail's own
-- References, mail_to and mail_cc its To and Cc address lists (the list a
-- reply goes back to).
ALTER TABLE patches ADD COLUMN mail_references text;
ALTER TABLE patches ADD COLUMN mail_to text;
ALTER TABLE patches ADD COLUMN mail_cc text;

-- outbox: a delivery state per mail (server/outbox.c).
--   held     kept only: built in dry-run (no --smtp-url, or --mail-dry-run);
--            never sent later by itself
--   queued   waiting for next_attempt
--   sending  claimed by a sender until lease_expires; data_started says
--            whether the message bytes began to go to the SMTP server
--   sent     the SMTP server accepted it (sent, smtp_reply)
--   unknown  a sender died (or lost the connection) after the message
--            bytes went out and before the server's answer was recorded:
--            it may have been delivered, so it is never retried by itself
--   failed   refused for good (5xx), or mail_max_attempts reached
-- Rows from before this migration were never sent: held.
ALTER TABLE outbox ADD COLUMN kind text NOT NULL DEFAULT 'reply';
ALTER TABLE outbox ADD COLUMN message_id text;
ALTER TABLE outbox ADD COLUMN state text NOT NULL DEFAULT 'held'
	CHECK (state IN ('held', 'queued', 'sending', 'sent', 'unknown', 'failed'));
ALTER TABLE outbox ADD COLUMN attempts int NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN next_attempt timestamptz NOT NULL DEFAULT now();
ALTER TABLE outbox ADD COLUMN lease_expires timestamptz;
ALTER TABLE outbox ADD COLUMN data_started boolean NOT NULL DEFAULT false;
ALTER TABLE outbox ADD COLUMN last_error text;
ALTER TABLE outbox ADD COLUMN smtp_reply text;
UPDATE outbox SET state = 'sent' WHERE sent IS NOT NULL;
CREATE INDEX outbox_due ON outbox (next_attempt) WHERE state = 'queued';
CREATE INDEX outbox_lease ON outbox (lease_expires) WHERE state = 'sending';
CREATE INDEX outbox_submission ON outbox (submission_id);
