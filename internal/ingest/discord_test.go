package ingest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

// discord is the gateway's recorder over b's ingester.
func (b *linearBundle) discord() *surfacediscord.Recorder {
	return surfacediscord.NewRecorder(b.ing, b.store, nil, nil)
}

func mention(att *thread.DiscordAttachment) thread.Stitch {
	return thread.Stitch{Content: "why is the build red?", ExternalID: att.DiscordThreadID, Author: &thread.Author{ID: "u1", Name: "Ada"}}
}

func discordMsg(id, text string) thread.Stitch {
	return thread.Stitch{Content: text, ExternalID: id, Author: &thread.Author{ID: "u1", Name: "Ada"}}
}

// discordChain lists a thread's stitches as type/external id.
func (b *linearBundle) discordChain(t *testing.T, id uuid.UUID) []string {
	t.Helper()
	chain, err := b.store.Stitches(context.Background(), id, db.StitchPage{})
	require.NoError(t, err)
	var out []string
	for _, s := range chain {
		out = append(out, string(s.Type)+"/"+s.ExternalID)
	}
	return out
}

func TestDiscordConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ThreadPromptAndTurnInOneGo", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		att := dbtest.DiscordAttachment()
		created, err := b.discord().DiscordConversation(ctx, *att, mention(att))
		require.NoError(t, err)
		require.True(t, created)

		th, err := b.store.ThreadByDiscordThread(ctx, att.DiscordThreadID)
		require.NoError(t, err)
		require.Equal(t, thread.TypeInteractive, th.Type)
		require.Equal(t, att.ThreadName, th.Goal)
		require.Equal(t, []string{"system_prompt/", "initial_prompt/" + att.DiscordThreadID}, b.discordChain(t, th.ID))
		chain, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
		require.NoError(t, err)
		require.Equal(t, thread.PlatformDiscord, chain[1].Source)
		require.Equal(t, "Ada", chain[1].Author.Name)
		got, err := b.store.DiscordAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, att.DiscordThreadID, got.LastMessageID, "backfill starts after the mention")
		require.Equal(t, 1, b.jobs(t, "weft_turn", th.ID.String()))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE platform = 'discord' AND event_key = $1 AND thread_id = $2`,
			att.DiscordThreadID, th.ID))
	})

	t.Run("DuplicateMentionIsIgnored", func(t *testing.T) {
		t.Parallel()
		b := setupLinear(t)
		att := dbtest.DiscordAttachment()
		_, err := b.discord().DiscordConversation(ctx, *att, mention(att))
		require.NoError(t, err)
		created, err := b.discord().DiscordConversation(ctx, *att, mention(att))
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM threads`))
		require.Equal(t, 1, b.jobs(t, "weft_turn", ""))
	})
}

func TestDiscordMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T) (*linearBundle, *thread.DiscordAttachment, uuid.UUID) {
		t.Helper()
		b := setupLinear(t)
		att := dbtest.DiscordAttachment()
		_, err := b.discord().DiscordConversation(ctx, *att, mention(att))
		require.NoError(t, err)
		th, err := b.store.ThreadByDiscordThread(ctx, att.DiscordThreadID)
		require.NoError(t, err)
		return b, att, th.ID
	}

	t.Run("EachNewMessageOnceAndOneTurnPerBatch", func(t *testing.T) {
		t.Parallel()
		b, att, id := setup(t)
		m1, m2, m3 := dbtest.Snowflake(), dbtest.Snowflake(), dbtest.Snowflake()
		n, err := b.discord().DiscordMessages(ctx, att.DiscordThreadID, []thread.Stitch{discordMsg(m1, "one")}, m1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		// A backfill seeing m1 again and two more: m1 is not stored twice.
		n, err = b.discord().DiscordMessages(ctx, att.DiscordThreadID,
			[]thread.Stitch{discordMsg(m1, "one"), discordMsg(m2, "two"), discordMsg(m3, "three")}, m3)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		// Redelivered: nothing new, no turn.
		n, err = b.discord().DiscordMessages(ctx, att.DiscordThreadID, []thread.Stitch{discordMsg(m2, "two")}, m2)
		require.NoError(t, err)
		require.Zero(t, n)

		require.Equal(t, []string{"system_prompt/", "initial_prompt/" + att.DiscordThreadID,
			"discord_message/" + m1, "discord_message/" + m2, "discord_message/" + m3}, b.discordChain(t, id))
		require.Equal(t, 3, b.jobs(t, "weft_turn", id.String()), "the mention, the message, the batch")
	})

	t.Run("UntrackedThreadWritesNothing", func(t *testing.T) {
		t.Parallel()
		b, _, _ := setup(t)
		before := b.count(t, `SELECT count(*) FROM webhook_deliveries`)
		m := dbtest.Snowflake()
		_, err := b.discord().DiscordMessages(ctx, dbtest.Snowflake(), []thread.Stitch{discordMsg(m, "hi")}, m)
		require.ErrorIs(t, err, thread.ErrNotFound)
		require.Equal(t, before, b.count(t, `SELECT count(*) FROM webhook_deliveries`))
	})

	t.Run("EditAndDeleteUpdateWithoutTurn", func(t *testing.T) {
		t.Parallel()
		b, att, id := setup(t)
		m := dbtest.Snowflake()
		_, err := b.discord().DiscordMessages(ctx, att.DiscordThreadID, []thread.Stitch{discordMsg(m, "typo")}, m)
		require.NoError(t, err)
		edited := time.Now().UTC().Truncate(time.Millisecond)
		require.NoError(t, b.discord().DiscordEdited(ctx, m, "fixed", edited))
		require.NoError(t, b.discord().DiscordEdited(ctx, dbtest.Snowflake(), "not ours", edited), "unknown messages are ignored")
		s, err := b.store.StitchByExternalID(ctx, thread.PlatformDiscord, m)
		require.NoError(t, err)
		require.Equal(t, "fixed", s.Content)
		require.WithinDuration(t, edited, s.EditedAt, time.Millisecond)

		require.NoError(t, b.discord().DiscordDeleted(ctx, m, time.Now()))
		s, err = b.store.StitchByExternalID(ctx, thread.PlatformDiscord, m)
		require.NoError(t, err)
		require.False(t, s.DeletedAt.IsZero())
		require.Equal(t, "fixed", s.Content, "history keeps the text")
		require.Equal(t, 2, b.jobs(t, "weft_turn", id.String()), "edits and deletes answer nothing")
	})

	t.Run("ArchiveDeactivatesAndAMessageReactivates", func(t *testing.T) {
		t.Parallel()
		b, att, id := setup(t)
		require.NoError(t, b.discord().DiscordThreadActive(ctx, att.DiscordThreadID, false))
		require.NoError(t, b.discord().DiscordThreadActive(ctx, dbtest.Snowflake(), false), "untracked threads are ignored")
		got, err := b.store.DiscordAttachment(ctx, id)
		require.NoError(t, err)
		require.False(t, got.Active)
		th, err := b.store.Thread(ctx, id)
		require.NoError(t, err)
		require.Equal(t, thread.StatusPending, th.Status, "the weft thread is untouched")
		active, err := b.discord().ActiveDiscordThreads(ctx)
		require.NoError(t, err)
		require.Empty(t, active)

		m := dbtest.Snowflake()
		_, err = b.discord().DiscordMessages(ctx, att.DiscordThreadID, []thread.Stitch{discordMsg(m, "back")}, m)
		require.NoError(t, err)
		got, err = b.store.DiscordAttachment(ctx, id)
		require.NoError(t, err)
		require.True(t, got.Active)
	})
}

func TestDiscordInteraction(t *testing.T) {
	t.Parallel()
	b := setupLinear(t)
	ev := surface.Event{Kind: surface.Command, Inbound: thread.Inbound{Platform: thread.PlatformDiscord,
		DeliveryID: "i1:abc", EventKey: "i1:abc", EventType: "INTERACTION_CREATE", Action: "status"}}
	res, err := b.ing.Record(context.Background(), ev)
	require.NoError(t, err)
	require.False(t, res.Duplicate)
	res, err = b.ing.Record(context.Background(), ev)
	require.NoError(t, err)
	require.True(t, res.Duplicate, "a replay")
}

// TestContinue attaches a Linear session's thread to a Discord or a Slack
// thread with its announcements, in one transaction.
func TestContinue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		attach func(c *thread.Continuation)
		column string
	}{
		{"Discord", func(c *thread.Continuation) {
			att := dbtest.DiscordAttachment()
			att.ThreadID = c.ThreadID
			c.Discord, c.URL = att, "https://discord.com/channels/"+att.GuildID+"/"+att.DiscordThreadID
		}, "has_discord"},
		{"Slack", func(c *thread.Continuation) {
			c.Slack = &thread.SlackAttachment{ThreadID: c.ThreadID, TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100", CreatedBy: "U1"}
			c.URL = "https://acme.slack.com/archives/C1/p1700000000000100"
		}, "has_slack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupLinear(t)
			res, err := b.ing.Record(ctx, surfacelinear.Created(delivery("s1", "created"), session("s1")))
			require.NoError(t, err)
			c := thread.Continuation{ThreadID: res.ThreadID, Summary: "summary"}
			tc.attach(&c)
			c.ToldText = "continued: " + c.URL
			require.NoError(t, b.ing.Continue(ctx, c))

			platform, target, err := c.Surface()
			require.NoError(t, err)
			rows, err := b.store.ThreadOutbox(ctx, res.ThreadID)
			require.NoError(t, err)
			var got []string
			for _, o := range rows[1:] { // after the session's acknowledgement
				body, err := o.Content()
				require.NoError(t, err)
				got = append(got, string(o.Platform)+"/"+string(o.Kind)+"/"+o.Target+"/"+body.Text+body.ExternalURL)
			}
			require.Equal(t, []string{
				string(platform) + "/message/" + target + "/summary",
				"linear/response/s1/continued: " + c.URL,
				"linear/session_update/s1/" + c.URL,
			}, got)
			require.Equal(t, 1, b.count(t, `SELECT count(*) FROM cross_platform_threads WHERE `+tc.column+` AND has_linear AND thread_id = $1`, res.ThreadID))

			c.Summary = "again"
			require.ErrorIs(t, b.ing.Continue(ctx, c), thread.ErrAlreadyAttached)
			require.ErrorIs(t, b.ing.Continue(ctx, thread.Continuation{ThreadID: res.ThreadID}), thread.ErrInvalid, "attaches nothing")
		})
	}
}

// TestDiscordGatewayObserved counts gateway events by outcome and traces
// each, its stitches stamped with the trace.
func TestDiscordGatewayObserved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)
	spans := tracetest.NewInMemoryExporter()
	b := setupLinear(t)
	rec := surfacediscord.NewRecorder(b.ing, b.store, m, sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)))

	att := dbtest.DiscordAttachment()
	_, err = rec.DiscordConversation(ctx, *att, mention(att))
	require.NoError(t, err)
	_, err = rec.DiscordConversation(ctx, *att, mention(att)) // redelivered
	require.NoError(t, err)
	_, err = rec.DiscordMessages(ctx, att.DiscordThreadID, []thread.Stitch{discordMsg("1300000000000000001", "a"), discordMsg("1300000000000000002", "b")}, "")
	require.NoError(t, err)
	_, err = rec.DiscordMessages(ctx, "1300000000000000099", []thread.Stitch{discordMsg("1300000000000000003", "c")}, "")
	require.ErrorIs(t, err, thread.ErrNotFound)

	events := map[string]float64{}
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != "weft_events_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			require.Equal(t, "discord", labels["platform"])
			require.Equal(t, "gateway", labels["source"])
			events[labels["outcome"]] = s.GetCounter().GetValue()
		}
	}
	require.Equal(t, map[string]float64{"accepted": 3, "duplicate": 1, "ignored": 1}, events)

	require.Len(t, spans.GetSpans(), 4, "a trace per gateway event")
	th, err := b.store.ThreadByDiscordThread(ctx, att.DiscordThreadID)
	require.NoError(t, err)
	chain, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	for _, st := range chain[1:] {
		var meta struct {
			TraceID string `json:"trace_id"`
		}
		require.NoError(t, json.Unmarshal(st.Metadata, &meta))
		require.NotEmpty(t, meta.TraceID, "stitch %s", st.Type)
	}
}
