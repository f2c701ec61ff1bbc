package slack_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// TestStreamMethods drives chat.startStream, appendStream, stopStream and
// chat.update through slack-go against the fake, with Slack's errors: a
// stream in a channel needs its recipient, only grows while streaming, and
// cannot be updated until stopped; a refusing channel is told apart.
func TestStreamMethods(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	srv.AddChannel("C2", "channel")
	srv.RefuseStreaming("C2", "method_not_supported_for_channel_type")
	parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "question")
	c, _ := newClient(t, srv, slacktest.BotToken)
	ctx := t.Context()
	code := func(err error) string {
		t.Helper()
		var e *surface.Error
		require.ErrorAs(t, err, &e)
		return e.Code
	}

	_, err := c.StartStream(ctx, slack.StreamStart{Channel: "C1", ThreadTS: parent.TS, Text: "Hel"})
	require.Equal(t, "invalid_arguments", code(err), "a channel needs the recipient")
	_, err = c.StartStream(ctx, slack.StreamStart{Channel: "C2", ThreadTS: parent.TS, Text: "Hel", RecipientUserID: "U1", RecipientTeamID: slacktest.TeamID})
	require.True(t, slack.StreamRefused(err), "%v", err)
	require.False(t, slack.StreamRefused(errFor("channel_not_found")))

	ts, err := c.StartStream(ctx, slack.StreamStart{Channel: "C1", ThreadTS: parent.TS, Text: "Hel", RecipientUserID: "U1", RecipientTeamID: slacktest.TeamID})
	require.NoError(t, err)
	require.NoError(t, c.AppendStream(ctx, "C1", ts, "lo, "))
	require.Equal(t, "streaming_state_conflict", code(c.Update(ctx, "C1", ts, "Hello", "", 0)))
	require.Equal(t, "msg_too_long", code(c.AppendStream(ctx, "C1", ts, strings.Repeat("x", slack.StreamTextLimit+1))))
	require.NoError(t, c.StopStream(ctx, "C1", ts, "world", "row-1", 0))
	require.True(t, slack.NotStreaming(c.AppendStream(ctx, "C1", ts, "more")))
	require.True(t, slack.NotStreaming(c.StopStream(ctx, "C1", ts, "", "", 0)))

	msgs := srv.Thread("C1", parent.TS)
	require.Len(t, msgs, 2)
	require.Equal(t, "Hello, world", msgs[1].Text)
	require.False(t, msgs[1].Streaming)
	require.Equal(t, "row-1", msgs[1].Metadata.EventPayload["outbox_id"])

	require.NoError(t, c.Update(ctx, "C1", ts, "Hello again", "", 0))
	require.Equal(t, "Hello again", srv.Thread("C1", parent.TS)[1].Text)
	require.Equal(t, "row-1", srv.Thread("C1", parent.TS)[1].Metadata.EventPayload["outbox_id"], "an update without metadata keeps it")
	require.Equal(t, "cant_update_message", code(c.Update(ctx, "C1", parent.TS, "not mine", "", 0)))
}

func errFor(code string) error {
	return &surface.Error{Platform: "slack", Kind: surface.KindNotFound, Code: code}
}

// TestSenderFinishesStream: a row delivered into its streamed message
// stops the stream with the rest of its text when the stream holds its
// beginning (no update), else stops it and replaces the text; a text past
// the limit continues in a second message, once however often the row is
// sent.
func TestSenderFinishesStream(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	ws := newWorkspaces(t, srv)
	c, err := ws.Client(t.Context(), slacktest.TeamID)
	require.NoError(t, err)
	s := slack.NewSender(ws)
	ctx := t.Context()
	start := func(text string) (string, string) {
		t.Helper()
		parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "question")
		ts, err := c.StartStream(ctx, slack.StreamStart{Channel: "C1", ThreadTS: parent.TS, Text: text, RecipientUserID: "U1", RecipientTeamID: slacktest.TeamID})
		require.NoError(t, err)
		return parent.TS, ts
	}
	target := func(threadTS string) string {
		return thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: threadTS}.String()
	}

	// The stream holds the answer's beginning: stopped with the rest.
	parent, ts := start("The answer")
	o := outboxRow(t, target(parent), "The answer is 4.", 1)
	before := len(srv.Calls("chat.update"))
	got, err := s.Finish(ctx, o, slack.Streamed{TS: ts, Streaming: true, Sent: "The answer", SentKnown: true})
	require.NoError(t, err)
	require.Equal(t, ts, got)
	require.Equal(t, "The answer is 4.", srv.Thread("C1", parent)[1].Text)
	require.Len(t, srv.Calls("chat.update"), before, "no update needed")

	// What it holds is unknown (another replica streamed it): stopped,
	// then replaced. Sent again, the same message ends the same.
	parent, ts = start("A first attempt")
	o = outboxRow(t, target(parent), "The second attempt.", 1)
	for range 2 {
		_, err = s.Finish(ctx, o, slack.Streamed{TS: ts, Streaming: true})
		require.NoError(t, err)
		o.Attempts++
	}
	msgs := srv.Thread("C1", parent)
	require.Len(t, msgs, 2)
	require.Equal(t, "The second attempt.", msgs[1].Text)
	require.Equal(t, o.ID.String(), msgs[1].Metadata.EventPayload["outbox_id"])

	// Past the limit: the rest in a second message, posted once.
	para := strings.Repeat("word ", 700)
	parent, ts = start("word")
	o = outboxRow(t, target(parent), para+"\n\n"+para, 1)
	for range 2 {
		_, err = s.Finish(ctx, o, slack.Streamed{TS: ts, Streaming: true})
		require.NoError(t, err)
		o.Attempts++
	}
	msgs = srv.Thread("C1", parent)
	require.Len(t, msgs, 3, "the streamed message and one more")
	require.Equal(t, strings.TrimSpace(para), msgs[1].Text)
	require.Equal(t, strings.TrimSpace(para), msgs[2].Text)
	require.EqualValues(t, 1, msgs[2].Metadata.EventPayload["part"])
}
