-- An outbox row may be dropped: a progress post (a thought, an action, a
-- notice) that failed and waits for a retry when an answer after it on its
-- surface is ready.
-- The answer makes it pointless, and a failing acknowledgement held every
-- later post of its session for minutes.

-- +goose Up
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_status_check;
ALTER TABLE platform_deliveries ADD CONSTRAINT platform_deliveries_status_check
    CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'dropped'));

-- +goose Down
UPDATE platform_deliveries SET status = 'failed' WHERE status = 'dropped';
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_status_check;
ALTER TABLE platform_deliveries ADD CONSTRAINT platform_deliveries_status_check
    CHECK (status IN ('pending', 'sending', 'sent', 'failed'));
