-- name: InsertInbound :exec
INSERT INTO webhook_deliveries (platform, delivery_id, event_key, event_type, action, outcome, thread_id, payload)
VALUES (@platform, @delivery_id, @event_key, @event_type, @action, @outcome, @thread_id, @payload);

-- name: RecordInbound :execrows
-- RecordInbound is InsertInbound that skips a delivery already recorded.
INSERT INTO webhook_deliveries (platform, delivery_id, event_key, event_type, action, outcome, thread_id, payload)
VALUES (@platform, @delivery_id, @event_key, @event_type, @action, @outcome, @thread_id, @payload)
ON CONFLICT DO NOTHING;

-- name: SetInboundThread :exec
UPDATE webhook_deliveries SET thread_id = sqlc.arg(thread_id)::text::uuid WHERE platform = @platform AND delivery_id = @delivery_id;
