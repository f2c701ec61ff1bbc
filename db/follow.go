package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// unwatchTimeout bounds a Follower's unwatch when it closes, which runs
// after its caller's context has ended.
const unwatchTimeout = 5 * time.Second

// Follower follows one thread's news (new stitches, the answer streaming
// on it) on a connection of its own: what the console's live timeline and
// the API's event stream each wake on, never on a timer.
type Follower struct {
	q    *Queries
	conn *pgx.Conn
	id   uuid.UUID
	pid  uint32
}

// Follow LISTENs on conn, which the Follower then owns and closes, and
// watches threadID (WatchStitches). Something written to the thread after
// Follow returns wakes Next; what was written before must be read by the
// caller, after Follow, to miss nothing.
func (q *Queries) Follow(ctx context.Context, conn *pgx.Conn, threadID uuid.UUID) (*Follower, error) {
	f := &Follower{q: q, conn: conn, id: threadID, pid: conn.PgConn().PID()}
	if _, err := conn.Exec(ctx, "LISTEN "+StitchChannel); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("follow %s: listen: %w", threadID, err)
	}
	if err := q.WatchStitches(ctx, threadID, f.pid); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("follow: %w", err)
	}
	return f, nil
}

// Next waits for the thread's next news: true when it came, false when idle
// passed without any (time for a keep-alive), or an error when ctx ended or
// the connection failed. Notifications of other threads watched on the same
// channel are passed over.
func (f *Follower) Next(ctx context.Context, idle time.Duration) (bool, error) {
	wait, cancel := context.WithTimeout(ctx, idle)
	defer cancel()
	for {
		n, err := f.conn.WaitForNotification(wait)
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("follow %s: wait: %w", f.id, err)
		case n.Payload == f.id.String():
			return true, nil
		}
	}
}

// Close unwatches the thread and closes the connection; ctx may have ended.
func (f *Follower) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unwatchTimeout)
	defer cancel()
	err := f.q.UnwatchStitches(ctx, f.id, f.pid)
	return errors.Join(err, f.conn.Close(ctx))
}
