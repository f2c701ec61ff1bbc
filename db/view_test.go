package db_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestViews seeds a small, known world and checks what each view says of it.
func TestViews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	pool := store.Pool()

	linear := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	discord := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()})
	cross := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	d := dbtest.DiscordAttachment()
	d.ThreadID = cross.ID
	require.NoError(t, store.AttachDiscord(ctx, *d))
	auto := dbtest.Thread(ctx, t, store, nil)
	_, err := store.SetStatus(ctx, auto.ID, thread.StatusChange{To: thread.StatusRunning})
	require.NoError(t, err)
	_, err = store.SetStatus(ctx, auto.ID, thread.StatusChange{To: thread.StatusCompleted, Result: json.RawMessage(`{"ok":true}`)})
	require.NoError(t, err)
	for _, tokens := range []int{100, 300} {
		_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: auto.ID, Type: thread.StitchLLMCall, Model: "m1", InputTokens: tokens, OutputTokens: 10, Latency: 200e6})
		require.NoError(t, err)
	}
	_, err = store.InsertOutbox(ctx, thread.Outbox{ThreadID: linear.ID, Platform: thread.PlatformLinear, Target: "s", Kind: thread.OutboxThought, Body: []byte(`{}`)})
	require.NoError(t, err)
	// A running thread whose lease lapsed long ago: what a crashed replica leaves.
	stuck := dbtest.Thread(ctx, t, store, nil)
	_, err = pool.Exec(ctx, `UPDATE threads SET status = 'running', lease_owner = 'dead', lease_expires_at = now() - interval '5 minutes',
		last_activity_at = now() - interval '10 minutes' WHERE thread_id = $1`, stuck.ID)
	require.NoError(t, err)

	scalar := func(sql string, args ...any) string {
		t.Helper()
		var s string
		require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&s))
		return s
	}
	require.Equal(t, "2", scalar(`SELECT count(*)::text FROM active_linear_threads`))
	require.Equal(t, "2", scalar(`SELECT count(*)::text FROM active_discord_threads`))
	require.Equal(t, cross.ID.String(), scalar(`SELECT thread_id::text FROM cross_platform_threads WHERE has_discord AND has_linear`))
	require.Equal(t, "linear+discord", scalar(`SELECT platforms FROM thread_overview WHERE thread_id = $1`, cross.ID))
	require.Equal(t, "discord", scalar(`SELECT platforms FROM thread_overview WHERE thread_id = $1`, discord.ID))
	require.Equal(t, "4", scalar(`SELECT stitches::text FROM thread_overview WHERE thread_id = $1`, auto.ID))
	require.Equal(t, stuck.ID.String()+" lease expired", scalar(`SELECT thread_id::text || ' ' || reason FROM stuck_threads`))
	require.Equal(t, "1", scalar(`SELECT unsent_activities::text FROM linear_session_health WHERE thread_status = 'pending' AND unsent_activities > 0`))
	require.Equal(t, "linear pending 1", scalar(`SELECT platform || ' ' || status || ' ' || deliveries FROM delivery_backlog`))
	require.Equal(t, "5 1", scalar(`SELECT threads || ' ' || completed FROM daily_thread_stats`))
	require.Equal(t, "m1 2 400 20", scalar(`SELECT model || ' ' || calls || ' ' || input_tokens || ' ' || output_tokens FROM llm_usage_daily`))

	for _, name := range db.Views() {
		rows, err := store.View(ctx, name)
		require.NoError(t, err, name)
		require.NotEmpty(t, rows.Columns, name)
	}
	overview, err := store.View(ctx, "thread_overview")
	require.NoError(t, err)
	require.Len(t, overview.Rows, 5)
	_, err = store.View(ctx, "threads; DROP TABLE threads")
	require.ErrorIs(t, err, thread.ErrNotFound)
}

// TestStuckThreadsUnansweredInput checks that stuck_threads lists a thread
// resting with input no answer covers, and only once nothing works on it.
func TestStuckThreadsUnansweredInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	pool := store.Pool()
	// age makes a thread and its stitches a minute old, as a thread left
	// behind by a replica that died is, with the status and lease given.
	age := func(id any, status, lease string) {
		t.Helper()
		_, err := pool.Exec(ctx, `UPDATE stitches SET created_at = now() - interval '1 minute' WHERE thread_id = $1`, id)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `UPDATE threads SET status = $2, waiting_reason = CASE WHEN $2 = 'waiting' THEN 'idle' END, lease_owner = CASE WHEN $3 <> '' THEN 'a' END,
			lease_expires_at = now() + nullif($3, '')::interval, last_activity_at = now() - interval '1 minute' WHERE thread_id = $1`, id, status, lease)
		require.NoError(t, err)
	}
	silent := dbtest.Thread(ctx, t, store, nil) // answered up to its first input, then a follow-up came
	_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: silent.ID, Type: thread.StitchLLMCall, Content: "first answer",
		Metadata: thread.Meta{AnsweredThrough: silent.StitchCount}.JSON()})
	require.NoError(t, err)
	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: silent.ID, Type: thread.StitchInitialPrompt, Content: "follow-up"})
	require.NoError(t, err)
	age(silent.ID, "waiting", "")

	answered := dbtest.Thread(ctx, t, store, nil)
	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: answered.ID, Type: thread.StitchLLMCall, Content: "answer",
		Metadata: thread.Meta{AnsweredThrough: answered.StitchCount}.JSON()})
	require.NoError(t, err)
	age(answered.ID, "waiting", "")

	working := dbtest.Thread(ctx, t, store, nil) // a long model call under a live lease
	age(working.ID, "running", "30 seconds")
	fresh := dbtest.Thread(ctx, t, store, nil) // input a second old: its turn is starting

	var got []string
	rows, err := pool.Query(ctx, `SELECT thread_id::text || ' ' || reason FROM stuck_threads ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		got = append(got, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{silent.ID.String() + " unanswered input"}, got, "not %s, %s or %s", answered.ID, working.ID, fresh.ID)
}

// TestViewActiveSlackThreads checks `weft ops` can read the Slack view
// beside the Linear and Discord ones.
func TestViewActiveSlackThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	slack := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Slack: &thread.SlackAttachment{
		TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100", ChannelType: "channel", CreatedBy: "U1",
	}})
	rows, err := store.View(ctx, "active_slack_threads")
	require.NoError(t, err)
	require.Len(t, rows.Rows, 1)
	require.Equal(t, "thread_id", rows.Columns[0])
	require.Equal(t, slack.ID.String(), rows.Rows[0][0])
}
