package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
)

// threadContext is the <slack_thread_context> section of the last model
// call's system prompt, with its current question; "" when it has none.
func (w *slackWorld) threadContext(t *testing.T) string {
	t.Helper()
	reqs := w.llm.Requests()
	require.NotEmpty(t, reqs)
	sys := reqs[len(reqs)-1].System
	i := strings.Index(sys, "<slack_thread_context>")
	if i < 0 {
		return ""
	}
	sec := sys[i:]
	if j := strings.Index(sec, "\nCurrent question: "); j >= 0 {
		if k := strings.IndexByte(sec[j+1:], '\n'); k >= 0 {
			sec = sec[:j+1+k]
		}
	}
	return sec
}

// TestSlackMentionInUnjoinedThreadHasItsHistory is thread-context-
// retrieval.md's first scenario: weft, mentioned inside a thread it never
// took part in, sees the thread's earlier messages, by their authors'
// names.
func TestSlackMentionInUnjoinedThreadHasItsHistory(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	bob := slacktest.User{ID: "U0BOB", Name: "bob"}
	root := w.slack.Post(w.ada, w.channel, "", "we run vm-1 and vm-2 for the demo")
	w.slack.Post(bob, w.channel, root.TS, "vm-2 was restarted this morning")
	w.slack.Post(w.ada, w.channel, root.TS, "<@"+slacktest.BotUserID+"> are they running?")
	w.answers(t, root.TS, 1)
	w.settled(t, w.thread(t, root.TS).ID)
	require.Equal(t, "<slack_thread_context>\n"+
		"ada: we run vm-1 and vm-2 for the demo\n"+
		"bob: vm-2 was restarted this morning\n"+
		"</slack_thread_context>\nCurrent question: are they running?", w.threadContext(t))
}

// TestSlackFollowUpInOwnThreadReadsNoSlack: in a thread weft opened,
// everything is stored, so a follow-up reads nothing from Slack and shows
// the opening mention once.
func TestSlackFollowUpInOwnThreadReadsNoSlack(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "noted"} })
	q := w.mention("we run vm-1 and vm-2")
	w.answers(t, q.TS, 1)
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)
	w.slack.Post(w.ada, w.channel, q.TS, "are they running?")
	w.answers(t, q.TS, 2)
	w.settled(t, th.ID)
	require.Equal(t, "<slack_thread_context>\n"+
		"ada: we run vm-1 and vm-2\n"+
		th.AgentName+": noted\n"+
		"</slack_thread_context>\nCurrent question: are they running?", w.threadContext(t))
	require.Empty(t, w.slack.Calls("conversations.replies"), "the thread is all stored")
}

// TestSlackSecondDMContinuesTheFirst: a top-level direct message soon
// after another continues that conversation: its prompt holds the first
// exchange. (Each is answered in its own thread, as before.)
func TestSlackSecondDMContinuesTheFirst(t *testing.T) {
	t.Parallel()
	w := newSlackWorld(t, false)
	const dm = "D0ADA"
	w.slack.AddChannel(dm, "im")
	answered := func(ts string) {
		t.Helper()
		require.Eventually(t, func() bool {
			for _, m := range w.slack.BotMessages(dm) {
				if m.ThreadTS == ts && m.Metadata != nil && !m.Streaming {
					return true
				}
			}
			return false
		}, 30*time.Second, 10*time.Millisecond, "weft never answered the direct message")
	}
	first := w.slack.Post(w.ada, dm, "", "my VM is vm-7")
	answered(first.TS)
	second := w.slack.Post(w.ada, dm, "", "is it running?")
	answered(second.TS)
	th, err := w.store.ThreadBySlackThread(context.Background(), slacktest.TeamID, dm, second.TS)
	require.NoError(t, err)
	w.settled(t, th.ID)
	require.Equal(t, "<slack_thread_context>\n"+
		"ada: my VM is vm-7\n"+
		th.AgentName+": Answer to: my VM is vm-7\n"+
		"</slack_thread_context>\nCurrent question: is it running?", w.threadContext(t))
}
