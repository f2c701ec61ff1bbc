-- name: InsertApproval :exec
INSERT INTO approvals (approval_id, thread_id, tool_call_id, tool_name, server, tool, arguments, expires_at)
VALUES (@approval_id, @thread_id, @tool_call_id, @tool_name, @server, @tool, @arguments, @expires_at);

-- name: Approval :one
SELECT * FROM approvals WHERE approval_id = @approval_id;

-- name: LockApproval :one
-- LockApproval reads a request under its row lock, so decisions on it are
-- taken one at a time: the first wins.
SELECT * FROM approvals WHERE approval_id = @approval_id FOR UPDATE;

-- name: DecideApproval :one
UPDATE approvals SET status = @status, decided_by = @decided_by, decided_name = @decided_name,
    decided_via = @decided_via, reason = @reason, decided_at = now()
WHERE approval_id = @approval_id AND status = 'pending'
RETURNING *;

-- name: ThreadApprovals :many
SELECT * FROM approvals WHERE thread_id = @thread_id ORDER BY created_at, approval_id;

-- name: ExpiredApprovals :many
-- ExpiredApprovals are requests still pending past their time, oldest first.
SELECT approval_id FROM approvals
WHERE status = 'pending' AND expires_at <= now()
ORDER BY expires_at LIMIT @max_rows;
