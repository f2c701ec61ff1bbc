package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestConstraints breaks each invariant the database enforces, by hand, as an
// operator with psql would, and checks Postgres refuses.
func TestConstraints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)

	// A thread with a two-stitch chain (root a1 → a2) and an empty second thread.
	const setup = `
		INSERT INTO threads (thread_id, thread_type, goal, stitch_count) VALUES
			('00000000-0000-0000-0000-00000000000a', 'autonomous', 'a', 2),
			('00000000-0000-0000-0000-00000000000b', 'autonomous', 'b', 0);
		INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, stitch_type, source_platform, external_id) VALUES
			('00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-00000000000a', NULL, 1, 'system_prompt', NULL, NULL),
			('00000000-0000-0000-0000-0000000000a2', '00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-0000000000a1', 2, 'discord_message', 'discord', '123456789012345678');`
	_, err := pool.Exec(ctx, setup)
	require.NoError(t, err)

	tests := []struct {
		name       string
		sql        string
		code       string // SQLSTATE expected
		constraint string
	}{
		{"BadThreadType", `INSERT INTO threads (thread_id, thread_type, goal) VALUES (gen_random_uuid(), 'batch', 'g')`, "23514", "threads_type_check"},
		{"BadThreadStatus", `UPDATE threads SET status = 'sleeping' WHERE goal = 'b'`, "23514", "threads_status_check"},
		{"EmptyGoal", `INSERT INTO threads (thread_id, thread_type, goal) VALUES (gen_random_uuid(), 'autonomous', '  ')`, "23514", "threads_goal_not_empty"},
		{"CompletedWithoutResult", `UPDATE threads SET status = 'completed' WHERE goal = 'b'`, "23514", "threads_result_when_completed"},
		{"ResultWithoutCompleted", `UPDATE threads SET result = '{"ok":true}' WHERE goal = 'b'`, "23514", "threads_result_when_completed"},
		{"FailedWithoutError", `UPDATE threads SET status = 'failed' WHERE goal = 'b'`, "23514", "threads_error_when_failed"},
		{"WaitingWithoutReason", `UPDATE threads SET status = 'waiting' WHERE goal = 'b'`, "23514", "threads_waiting_reason_when_waiting"},
		{"BadStitchType", `INSERT INTO stitches (stitch_id, thread_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000b', 1, 'teams_message')`, "23514", "stitches_stitch_type_check"},
		{"SecondRoot", `INSERT INTO stitches (stitch_id, thread_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000a', 1, 'initial_prompt')`, "23505", "stitches_thread_seq_key"},
		{"SecondRootAnySeq", `INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000a', NULL, 1, 'initial_prompt')`, "23505", "stitches_thread_seq_key"},
		{"RootNotFirst", `INSERT INTO stitches (stitch_id, thread_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000a', 3, 'initial_prompt')`, "23514", "stitches_root_is_first"},
		{"ForkedChain", `INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-0000000000a1', 3, 'llm_call')`, "23505", "stitches_one_successor"},
		{"DuplicateSeq", `INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-0000000000a2', 2, 'llm_call')`, "23505", "stitches_thread_seq_key"},
		{"PreviousInOtherThread", `INSERT INTO stitches (stitch_id, thread_id, previous_stitch_id, seq, stitch_type) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000b', '00000000-0000-0000-0000-0000000000a2', 2, 'llm_call')`, "23503", "stitches_previous_same_thread"},
		{"DuplicateExternalID", `INSERT INTO stitches (stitch_id, thread_id, seq, stitch_type, source_platform, external_id) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000b', 1, 'discord_message', 'discord', '123456789012345678')`, "23505", "stitches_source_external_key"},
		{"StitchSnowflake", `INSERT INTO stitches (stitch_id, thread_id, seq, stitch_type, source_platform, external_id) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000b', 1, 'discord_message', 'discord', 'abc')`, "23514", "stitches_discord_snowflake"},
		{"MetadataSnowflake", `INSERT INTO discord_thread_metadata (thread_id, discord_thread_id, channel_id, guild_id, created_by, thread_name) VALUES ('00000000-0000-0000-0000-00000000000b', '12345', '123456789012345678', '123456789012345678', 'a', 'n')`, "23514", "discord_thread_metadata_snowflakes"},
		{"BadSessionStatus", `INSERT INTO linear_thread_metadata (thread_id, session_id, workspace_id, created_by_user_id, session_status) VALUES ('00000000-0000-0000-0000-00000000000b', 's', 'w', 'u', 'sleeping')`, "23514", "check_session_status"},
		{"BadOutboxStatus", `INSERT INTO platform_deliveries (delivery_id, thread_id, platform, target, kind, body, status) VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000b', 'linear', 's', 'thought', '{}', 'lost')`, "23514", "platform_deliveries_status_check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pool.Exec(ctx, tt.sql)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Equal(t, tt.code, pgErr.Code, pgErr.Message)
			require.Equal(t, tt.constraint, pgErr.ConstraintName, pgErr.Message)
		})
	}

	t.Run("StaleSessionStatusAccepted", func(t *testing.T) {
		_, err := pool.Exec(ctx, `INSERT INTO linear_thread_metadata (thread_id, session_id, workspace_id, created_by_user_id, session_status)
			VALUES ('00000000-0000-0000-0000-00000000000b', 'sess-stale', 'w', 'u', 'stale')`)
		require.NoError(t, err)
	})
}

// TestRefused tells a write the database refused from one it never
// answered, on errors as the store returns them.
func TestRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	in := thread.Inbound{Platform: thread.PlatformLinear, DeliveryID: "d1", EventKey: "session-1", EventType: "AgentSessionEvent"}
	duplicate := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		if _, err := tx.Write(ctx, db.Write{Inbound: &in}); err != nil {
			return err
		}
		_, err := tx.Write(ctx, db.Write{Inbound: &in})
		return err
	})
	require.ErrorIs(t, duplicate, thread.ErrDuplicateDelivery)
	expired, cancel := context.WithCancel(ctx)
	cancel()
	_, gone := store.Thread(expired, uuid.New())
	closed := db.New(dbtest.NewPool(t), dbtest.Logger(t))
	closed.Pool().Close()
	_, unreachable := closed.Thread(ctx, uuid.New())
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	_, midStatement := store.Pool().Exec(short, `SELECT pg_sleep(5)`)
	statementTimeout := store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		_, err := tx.Pgx().Exec(ctx, `SET LOCAL statement_timeout = 10; SELECT pg_sleep(5)`)
		return err
	})

	for _, tc := range []struct {
		name    string
		err     error
		refused bool
	}{
		{"DuplicateDelivery", duplicate, true},
		{"InvalidBeforeSending", fmt.Errorf("write: %w", thread.ErrInvalid), true},
		{"Transition", &thread.TransitionError{From: thread.StatusCompleted, To: thread.StatusRunning}, true},
		{"CheckViolation", &pgconn.PgError{Code: "23514"}, true},
		{"ValueTooLong", &pgconn.PgError{Code: "22001"}, true},
		{"Deadlock", &pgconn.PgError{Code: "40P01"}, true},
		{"Cancelled", gone, false},
		{"PoolClosed", unreachable, false},
		{"DeadlineMidStatement", midStatement, false},
		{"StatementTimeout", statementTimeout, false},
		{"Terminated", &pgconn.PgError{Code: "57P01"}, false},
		{"ReadOnly", &pgconn.PgError{Code: "25006"}, false},
	} {
		require.Error(t, tc.err, tc.name)
		require.Equal(t, tc.refused, db.Refused(tc.err), "%s: %v", tc.name, tc.err)
	}
}
