package slack

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestSlackChannelMessageNoReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    slackapi.Message
		want bool
	}{
		{"Alone", slackapi.Message{TS: "1700000000.000100"}, true},
		{"ThreadRoot", slackapi.Message{TS: "1700000000.000100", ThreadTS: "1700000000.000100", ReplyCount: 2}, false},
		{"BroadcastReply", slackapi.Message{TS: "1700000000.000300", ThreadTS: "1700000000.000100", Subtype: "thread_broadcast"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, slackChannelMessage(tc.m).NoReplies)
		})
	}
}

// longThread is a thread of a parent and 249 replies ("reply 1" … "reply
// 249") in a fake Slack that pages by 60, so that reading it takes several
// pages, and Slack's side of weft on it.
func longThread(t *testing.T) (*App, *slacktest.Server, slacktest.Message) {
	t.Helper()
	fake := slacktest.NewServer(t)
	fake.AddChannel("C0LONG", "channel")
	fake.SetPageCap(60)
	a, err := New(Config{BotToken: slacktest.BotToken, APIURL: fake.APIURL(), HistoryPerMinute: 1000}, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	u := slacktest.User{ID: "U0ADA", Name: "ada"}
	root := fake.Post(u, "C0LONG", "", "the long thread")
	for i := range 249 {
		fake.Post(u, "C0LONG", root.TS, fmt.Sprintf("reply %d", i+1))
	}
	return a, fake, root
}

// TestBackfillKeepsTheNewest: what came before weft joined a long thread
// is its parent and its newest messages, not its oldest.
func TestBackfillKeepsTheNewest(t *testing.T) {
	t.Parallel()
	a, fake, root := longThread(t)
	mention := fake.Post(slacktest.User{ID: "U0BOB"}, "C0LONG", root.TS, "<@"+slacktest.BotUserID+"> sum it up")
	got, err := a.Backfill().SlackThreadBefore(t.Context(),
		&thread.SlackAttachment{TeamID: slacktest.TeamID, ChannelID: "C0LONG", ThreadTS: root.TS}, mention.TS)
	require.NoError(t, err)
	require.Len(t, got, maxSlackBackfill)
	require.Equal(t, "the long thread", got[0].Text)
	require.Equal(t, "reply 51", got[1].Text)
	require.Equal(t, "reply 249", got[len(got)-1].Text)
}

// TestDiscoveryRepliesKeepTheNewest: discovery shows a relevant thread
// weft never stored by its parent and newest replies.
func TestDiscoveryRepliesKeepTheNewest(t *testing.T) {
	t.Parallel()
	a, _, root := longThread(t)
	got, err := slackChannels{a.ws}.Replies(t.Context(), slacktest.TeamID, "C0LONG", root.TS, "", 50)
	require.NoError(t, err)
	require.Len(t, got, 50)
	require.Equal(t, "the long thread", got[0].Text)
	require.Equal(t, "reply 201", got[1].Text)
	require.Equal(t, "reply 249", got[49].Text)
}

// TestBackfillMarksEditsAndDeletions: what came before weft joined shows an
// edited message as edited and a deleted parent (Slack's tombstone, kept
// while it has replies) as deleted, as every history section does.
func TestBackfillMarksEditsAndDeletions(t *testing.T) {
	t.Parallel()
	fake := slacktest.NewServer(t)
	fake.AddChannel("C0EDIT", "channel")
	a, err := New(Config{BotToken: slacktest.BotToken, APIURL: fake.APIURL(), HistoryPerMinute: 1000}, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ada := slacktest.User{ID: "U0ADA", Name: "ada"}
	root := fake.Post(ada, "C0EDIT", "", "vm-7 is down")
	reply := fake.Post(ada, "C0EDIT", root.TS, "vm-8 too")
	_, ok := fake.Edit("C0EDIT", reply.TS, "vm-8 too, since noon")
	require.True(t, ok)
	_, ok = fake.Delete("C0EDIT", root.TS)
	require.True(t, ok)
	mention := fake.Post(slacktest.User{ID: "U0BOB"}, "C0EDIT", root.TS, "<@"+slacktest.BotUserID+"> why?")
	got, err := a.Backfill().SlackThreadBefore(t.Context(),
		&thread.SlackAttachment{TeamID: slacktest.TeamID, ChannelID: "C0EDIT", ThreadTS: root.TS}, mention.TS)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.True(t, got[0].Deleted, "the deleted parent: %+v", got[0])
	require.False(t, got[1].Deleted)
	require.True(t, got[1].Edited, "the edited reply: %+v", got[1])
	require.Equal(t, "vm-8 too, since noon", got[1].Text)
}
