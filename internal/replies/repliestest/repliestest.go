// Package repliestest builds the long conversations get-thread-replies is
// tested on, and walks a surface's pages, so the agent tool, the REST API
// and the MCP server are held to the same checks. Only tests import it.
package repliestest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/thread"
)

// Conversation is a stored Discord conversation with n replies: people's
// messages and weft's thoughts, alternating, after the initial prompt.
type Conversation struct {
	Thread *thread.Thread
	// DiscordThreadID is the Discord thread it is attached to.
	DiscordThreadID string
	// Replies are the replies' texts, oldest first ("reply 7").
	Replies []string
	// Edited and Deleted are the indexes in Replies of the reply that was
	// edited (its text is Replies[Edited]) and the one deleted.
	Edited, Deleted int
}

// NewConversation stores a conversation of n ≥ 4 replies.
func NewConversation(ctx context.Context, t testing.TB, store *db.Store, n int) *Conversation {
	t.Helper()
	att := dbtest.DiscordAttachment()
	c := &Conversation{
		Thread:          dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: att}),
		DiscordThreadID: att.DiscordThreadID,
		Edited:          n / 3, Deleted: 2 * n / 3,
	}
	externals := make([]string, n)
	for i := range n {
		s := thread.Stitch{ThreadID: c.Thread.ID, Type: thread.StitchAgentThought, Content: fmt.Sprintf("reply %d", i)}
		if i%2 == 0 {
			externals[i] = dbtest.Snowflake()
			s.Type, s.Source, s.ExternalID = thread.StitchDiscordMessage, thread.PlatformDiscord, externals[i]
			s.Author = &thread.Author{ID: "42", Name: "alice"}
		}
		_, err := store.AppendStitch(ctx, s)
		require.NoError(t, err)
		c.Replies = append(c.Replies, s.Content)
	}
	if c.Edited%2 != 0 {
		c.Edited++ // people's messages are the ones edited and deleted
	}
	if c.Deleted%2 != 0 {
		c.Deleted++
	}
	c.Replies[c.Edited] += " (edited)"
	_, err := store.EditStitch(ctx, thread.PlatformDiscord, externals[c.Edited], db.StitchEdit{Content: c.Replies[c.Edited], EditedAt: time.Now()})
	require.NoError(t, err)
	_, err = store.EditStitch(ctx, thread.PlatformDiscord, externals[c.Deleted], db.StitchEdit{DeletedAt: time.Now()})
	require.NoError(t, err)
	return c
}

// Fetch reads one page at cursor ("" for the first) in a surface's own way.
type Fetch func(cursor string) *replies.Response

// Walk pages through a thread with fetch until the last page and returns
// every reply in the order received. Every page must carry the parent, and
// a page with more after it must be full.
func Walk(t testing.TB, limit int, fetch Fetch) []replies.Message {
	t.Helper()
	var all []replies.Message
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10_000, "paging never ends")
		resp := fetch(cursor)
		require.NotNil(t, resp.Parent, "every page carries the parent")
		all = append(all, resp.Replies...)
		if !resp.HasMore {
			require.Nil(t, resp.NextCursor, "the last page's nextCursor is null")
			return all
		}
		require.Len(t, resp.Replies, limit, "a page with more after it is full")
		require.NotNil(t, resp.NextCursor)
		require.NotEmpty(t, *resp.NextCursor)
		cursor = *resp.NextCursor
	}
}

// Check asserts that got is exactly c's replies in order (reversed for
// newest first), none missing or repeated, with the edited one flagged and
// showing its new text and the deleted one flagged with null text.
func (c *Conversation) Check(t testing.TB, got []replies.Message, newest bool) {
	t.Helper()
	require.Len(t, got, len(c.Replies))
	seen := make(map[string]bool, len(got))
	for i, m := range got {
		want := i
		if newest {
			want = len(c.Replies) - 1 - i
		}
		require.False(t, seen[m.ID], "reply %s repeated", m.ID)
		seen[m.ID] = true
		switch want {
		case c.Deleted:
			require.True(t, m.Deleted, "reply %d is deleted", want)
			require.Nil(t, m.Text, "a deleted reply has no text")
		case c.Edited:
			require.True(t, m.Edited, "reply %d is edited", want)
			require.NotNil(t, m.EditedAt)
			require.Equal(t, c.Replies[want], *m.Text)
		default:
			require.False(t, m.Edited || m.Deleted, "reply %d is neither edited nor deleted", want)
			require.Equal(t, c.Replies[want], *m.Text)
		}
	}
}

// CheckShape asserts that raw, a page read by thread_id as any surface
// answers it, is in get-thread-replies.md's shape: parent, replies,
// nextCursor (null on the last page) and hasMore, each message with its
// ts, the author's id as user, text, edited, deleted and subtype; so a
// client of the design reads it as it reads a Slack thread's.
func CheckShape(t testing.TB, raw []byte) {
	t.Helper()
	var page map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &page))
	for _, k := range []string{"parent", "replies", "nextCursor", "hasMore"} {
		require.Contains(t, page, k, "get-thread-replies.md's %s", k)
	}
	var more bool
	require.NoError(t, json.Unmarshal(page["hasMore"], &more))
	if !more {
		require.Equal(t, "null", string(page["nextCursor"]), "the last page's nextCursor is null")
	}
	var msgs []map[string]any
	require.NoError(t, json.Unmarshal(page["replies"], &msgs))
	replyCount := len(msgs)
	if string(page["parent"]) != "null" {
		var parent map[string]any
		require.NoError(t, json.Unmarshal(page["parent"], &parent))
		msgs = append(msgs, parent)
	}
	require.NotEmpty(t, msgs)
	for _, m := range msgs {
		require.Regexp(t, `^[0-9]{10}\.[0-9]{6}$`, m["ts"], "each message has its ts: %v", m)
		for _, k := range []string{"text", "edited", "deleted", "subtype"} {
			require.Contains(t, m, k)
		}
		if author, ok := m["author"].(map[string]any); ok && author["id"] != nil && author["id"] != "" {
			require.Equal(t, author["id"], m["user"], "user is the author's id")
		}
	}
	// A client of the design decodes it as a Slack thread's page.
	var slack replies.SlackResponse
	require.NoError(t, json.Unmarshal(raw, &slack))
	require.Len(t, slack.Replies, replyCount)
	for _, r := range slack.Replies {
		require.NotEmpty(t, r.TS)
	}
}
