-- +goose Up
-- A notice is weft's own word on a turn's state ("the model is busy,
-- retrying"): a thought on Linear, a message on Discord.
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_kind_check;
ALTER TABLE platform_deliveries ADD CONSTRAINT platform_deliveries_kind_check CHECK (kind IN (
    'thought', 'action', 'elicitation', 'response', 'error', 'message', 'session_update', 'notice'));

-- +goose Down
DELETE FROM platform_deliveries WHERE kind = 'notice';
ALTER TABLE platform_deliveries DROP CONSTRAINT platform_deliveries_kind_check;
ALTER TABLE platform_deliveries ADD CONSTRAINT platform_deliveries_kind_check CHECK (kind IN (
    'thought', 'action', 'elicitation', 'response', 'error', 'message', 'session_update'));
