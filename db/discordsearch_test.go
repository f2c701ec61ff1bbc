package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestStoredDiscordMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)

	// Two tracked threads in one channel and one in another. The mention
	// that opened the first is its discord-sourced initial prompt.
	channel := dbtest.Snowflake()
	first := dbtest.DiscordAttachment()
	first.ChannelID, first.DiscordThreadID = channel, "100000000000000001"
	second := dbtest.DiscordAttachment()
	second.ChannelID = channel
	elsewhere := dbtest.DiscordAttachment()

	alice := &thread.Author{ID: "1001", Name: "Alice_Ops"}
	bob := &thread.Author{ID: "1002", Name: "bob"}
	th1, err := thread.NewBuilder(nil).WithGoal("deploys").InteractiveDiscord(first).
		WithInitialPrompt(thread.Stitch{Content: "@weft why did the deploy fail?", Source: thread.PlatformDiscord,
			ExternalID: first.DiscordThreadID, Author: alice}).Build(ctx, store)
	require.NoError(t, err)
	th2 := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: second})
	th3 := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: elsewhere})

	msg := func(th *thread.Thread, id string, a *thread.Author, text string) {
		t.Helper()
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage,
			Source: thread.PlatformDiscord, ExternalID: id, Author: a, Content: text})
		require.NoError(t, err)
	}
	// Ids of different lengths: numeric order is not text order.
	msg(th1, "100000000000000002", bob, "it timed out")
	msg(th1, "100000000000000003", alice, "on which host?")
	msg(th1, "1000000000000000004", bob, "build-2") // 19 digits: the newest
	msg(th2, "200000000000000001", bob, "other thread")
	msg(th3, "300000000000000001", bob, "other channel")
	_, err = store.AppendStitch(ctx, thread.Stitch{ThreadID: th1.ID, Type: thread.StitchAgentThought, Content: "not a message"})
	require.NoError(t, err)

	edited, deleted := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond), time.Now().UTC().Truncate(time.Microsecond)
	_, err = store.EditStitch(ctx, thread.PlatformDiscord, "100000000000000002", db.StitchEdit{Content: "it timed out twice", EditedAt: edited})
	require.NoError(t, err)
	_, err = store.EditStitch(ctx, thread.PlatformDiscord, "100000000000000003", db.StitchEdit{DeletedAt: deleted})
	require.NoError(t, err)

	ids := func(ms []db.DiscordMessage) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.ID
		}
		return out
	}

	tests := []struct {
		name string
		q    db.DiscordMessageQuery
		want []string
	}{
		{"ThreadNewestFirst", db.DiscordMessageQuery{DiscordThreadID: first.DiscordThreadID},
			[]string{"1000000000000000004", "100000000000000003", "100000000000000002", "100000000000000001"}},
		{"Limit", db.DiscordMessageQuery{DiscordThreadID: first.DiscordThreadID, Limit: 2},
			[]string{"1000000000000000004", "100000000000000003"}},
		{"ChannelSpansItsThreads", db.DiscordMessageQuery{ChannelID: channel},
			[]string{"1000000000000000004", "200000000000000001", "100000000000000003", "100000000000000002", "100000000000000001"}},
		{"AuthorID", db.DiscordMessageQuery{ChannelID: channel, AuthorID: "1001"},
			[]string{"100000000000000003", "100000000000000001"}},
		{"AuthorNameAnyCase", db.DiscordMessageQuery{ChannelID: channel, AuthorName: "alice_"},
			[]string{"100000000000000003", "100000000000000001"}},
		{"AuthorNameUnderscoreIsLiteral", db.DiscordMessageQuery{ChannelID: channel, AuthorName: "b_b"}, []string{}},
		{"AuthorNamePercentIsLiteral", db.DiscordMessageQuery{ChannelID: channel, AuthorName: "a%o"}, []string{}},
		{"BeforeIsNearestFirst", db.DiscordMessageQuery{DiscordThreadID: first.DiscordThreadID, Before: "1000000000000000004", Limit: 2},
			[]string{"100000000000000003", "100000000000000002"}},
		{"LiveLeavesDeletedOut", db.DiscordMessageQuery{DiscordThreadID: first.DiscordThreadID, After: "100000000000000002", Live: true, Limit: 1},
			[]string{"1000000000000000004"}},
		{"AfterIsNearestOldestFirst", db.DiscordMessageQuery{DiscordThreadID: first.DiscordThreadID, After: "100000000000000001", Limit: 2},
			[]string{"100000000000000002", "100000000000000003"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := store.StoredDiscordMessages(ctx, tc.q)
			require.NoError(t, err)
			require.Equal(t, tc.want, ids(got))
		})
	}

	t.Run("FieldsAndFlags", func(t *testing.T) {
		t.Parallel()
		got, err := store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{DiscordThreadID: first.DiscordThreadID})
		require.NoError(t, err)
		byID := map[string]db.DiscordMessage{}
		for _, m := range got {
			byID[m.ID] = m
		}
		e := byID["100000000000000002"]
		require.Equal(t, "it timed out twice", e.Content)
		require.True(t, e.EditedAt.Equal(edited), "edited at %s", e.EditedAt)
		require.True(t, e.DeletedAt.IsZero())
		require.Equal(t, thread.Author{ID: "1002", Name: "bob"}, e.Author)
		require.Equal(t, th1.ID, e.ThreadID)
		require.Equal(t, first.DiscordThreadID, e.DiscordThreadID)
		require.Equal(t, channel, e.ChannelID)
		require.Equal(t, first.GuildID, e.GuildID)

		d := byID["100000000000000003"]
		require.True(t, d.DeletedAt.Equal(deleted))
		require.Equal(t, "on which host?", d.Content, "a deleted message keeps its text")
		require.Equal(t, "@weft why did the deploy fail?", byID["100000000000000001"].Content)
	})

	t.Run("OneByID", func(t *testing.T) {
		t.Parallel()
		m, err := store.StoredDiscordMessage(ctx, "200000000000000001")
		require.NoError(t, err)
		require.Equal(t, second.DiscordThreadID, m.DiscordThreadID)
		require.Equal(t, "other thread", m.Content)

		_, err = store.StoredDiscordMessage(ctx, "999999999999999999")
		require.ErrorIs(t, err, thread.ErrNotFound)
	})

	t.Run("NeedsAThreadOrChannel", func(t *testing.T) {
		t.Parallel()
		_, err := store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{AuthorID: "1001"})
		require.ErrorIs(t, err, thread.ErrInvalid)
		_, err = store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{DiscordThreadID: "x"})
		require.ErrorIs(t, err, thread.ErrInvalid)
	})
}

// The bot's replies sent to a tracked thread are found with people's
// messages, authored "weft" as a bot; unsent and Linear posts are not.
func TestStoredDiscordMessagesIncludeBotReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	store := db.New(pool, dbtest.Logger(t))
	att := dbtest.DiscordAttachment()
	th := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att})
	_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage,
		Source: thread.PlatformDiscord, ExternalID: "400000000000000001", Author: &thread.Author{ID: "1001", Name: "alice"}, Content: "is prod down?"})
	require.NoError(t, err)
	post := func(platform, kind, status, externalID, text string) {
		t.Helper()
		_, err := pool.Exec(ctx, `INSERT INTO platform_deliveries (delivery_id, thread_id, platform, target, kind, body, status, external_id, sent_at)
			VALUES ($1, $2, $3, $4, $5, jsonb_build_object('text', $6::text), $7, nullif($8, ''), CASE WHEN $7 = 'sent' THEN now() END)`,
			thread.NewID(), th.ID, platform, att.DiscordThreadID, kind, text, status, externalID)
		require.NoError(t, err)
	}
	post("discord", "response", "sent", "400000000000000002", "prod is fine, staging is down")
	post("discord", "response", "pending", "", "not yet sent")
	post("linear", "thought", "sent", "lin-1", "a Linear activity")

	got, err := store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{DiscordThreadID: att.DiscordThreadID})
	require.NoError(t, err)
	require.Len(t, got, 2)
	reply := got[0]
	require.Equal(t, "400000000000000002", reply.ID)
	require.Equal(t, "prod is fine, staging is down", reply.Content)
	require.Equal(t, thread.Author{Name: "weft", Bot: true}, reply.Author)
	require.Equal(t, th.ID, reply.ThreadID)

	mine, err := store.StoredDiscordMessages(ctx, db.DiscordMessageQuery{DiscordThreadID: att.DiscordThreadID, AuthorName: "weft"})
	require.NoError(t, err)
	require.Len(t, mine, 1, "the bot's replies are found by its name")
}
