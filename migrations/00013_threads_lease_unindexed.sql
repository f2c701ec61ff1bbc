-- The lease columns change on every turn: taken, renewed while the model
-- answers, given up. Indexed, each change writes an index entry and cannot
-- be a heap-only (HOT) update; nothing needs the index, since lapsed
-- leases are only looked for among running threads, which the status index
-- finds. Free space on each page lets those updates stay on the page.

-- +goose Up
DROP INDEX threads_lease_expires_idx;
ALTER TABLE threads SET (fillfactor = 80);

-- +goose Down
ALTER TABLE threads RESET (fillfactor);
CREATE INDEX threads_lease_expires_idx ON threads (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
