-- The inbound ledger and the outbound outbox.

-- +goose Up
-- Every inbound delivery (webhook, gateway event, interaction), keyed by
-- platform and delivery id: dedupe, audit, and replay for debugging.
CREATE TABLE webhook_deliveries (
    platform     text NOT NULL,
    delivery_id  text NOT NULL,
    -- The event's own identity (a Linear session id for `created`, an activity
    -- id for `prompted`, a Discord message id): a redelivery can arrive under a
    -- new delivery id, so dedupe on this too.
    event_key    text,
    event_type   text NOT NULL,
    action       text,
    outcome      text NOT NULL DEFAULT 'processed',
    thread_id    uuid REFERENCES threads (thread_id) ON DELETE SET NULL,
    payload      jsonb,
    received_at  timestamptz NOT NULL DEFAULT now(),

    PRIMARY KEY (platform, delivery_id),
    CONSTRAINT webhook_deliveries_platform_check CHECK (platform IN ('linear', 'discord', 'api')),
    CONSTRAINT webhook_deliveries_outcome_check CHECK (outcome IN ('processed', 'ignored', 'duplicate'))
);

CREATE UNIQUE INDEX webhook_deliveries_event_key ON webhook_deliveries (platform, event_key)
    WHERE event_key IS NOT NULL;
CREATE INDEX webhook_deliveries_received_idx ON webhook_deliveries (received_at);

-- The outbox: every message or activity weft sends is first a row here,
-- written in the transaction of the stitch it comes from. The row id is the
-- idempotency key on the platform (a Linear activity id, a Discord nonce).
CREATE TABLE platform_deliveries (
    delivery_id     uuid PRIMARY KEY,
    thread_id       uuid NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    stitch_id       uuid REFERENCES stitches (stitch_id) ON DELETE CASCADE,
    platform        text NOT NULL,
    -- Where it goes: a Linear session id or a Discord channel id.
    target          text NOT NULL,
    kind            text NOT NULL,
    body            jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claimed_until   timestamptz,
    last_error      text,
    external_id     text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,

    CONSTRAINT platform_deliveries_platform_check CHECK (platform IN ('linear', 'discord')),
    CONSTRAINT platform_deliveries_kind_check CHECK (kind IN (
        'thought', 'action', 'elicitation', 'response', 'error', 'message', 'session_update')),
    CONSTRAINT platform_deliveries_status_check CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
    CONSTRAINT platform_deliveries_sent_at CHECK ((status = 'sent') = (sent_at IS NOT NULL)),
    CONSTRAINT platform_deliveries_attempts_check CHECK (attempts >= 0)
);

CREATE INDEX platform_deliveries_due_idx ON platform_deliveries (next_attempt_at)
    WHERE status IN ('pending', 'sending');
CREATE INDEX platform_deliveries_thread_idx ON platform_deliveries (thread_id, created_at);

-- +goose Down
DROP TABLE platform_deliveries;
DROP TABLE webhook_deliveries;
