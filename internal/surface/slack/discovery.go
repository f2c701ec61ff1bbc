package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
)

// ErrSlackRateLimited marks a Slack read refused for its rate limit; the
// error's retry.Hint, when it has one, is Slack's Retry-After.
var ErrSlackRateLimited = errors.New("slack rate limit")

// slackCooldown is how long discovery leaves Slack's history methods alone
// after a rate limit that said nothing of how long: Slack's tightest limit
// on them is one call a minute.
const slackCooldown = time.Minute

// SlackChannelReader reads Slack workspaces' channels through the Web API,
// each with its own workspace's bot token; internal/app adapts
// *slack.Workspaces. A rate-limited read fails with an error wrapping
// ErrSlackRateLimited.
type SlackChannelReader interface {
	// TopLevel returns one page (conversations.history) of the channel's
	// newest top-level messages before latest, at most n, oldest first.
	TopLevel(ctx context.Context, teamID, channelID, latest string, n int) ([]discovery.ChannelMessage, error)
	// BotUserID is weft's bot user in a workspace (auth.test, asked once).
	BotUserID(ctx context.Context, teamID string) (string, error)
	// Replies returns a thread's parent and newest replies
	// (conversations.replies), at most n messages, oldest first, only
	// those before latest when it is set.
	Replies(ctx context.Context, teamID, channelID, threadTS, latest string, n int) ([]discovery.ChannelMessage, error)
	// SetStatus sets the status line under a thread
	// (assistant.threads.setStatus).
	SetStatus(ctx context.Context, teamID, channelID, threadTS, status string) error
}

// SlackDiscoveryStore is what discovery reads of weft's Slack threads.
// *db.Store implements it.
type SlackDiscoveryStore interface {
	tenancy.Organisations
	SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error)
	ThreadBySlackThread(ctx context.Context, teamID, channelID, threadTS string) (*thread.Thread, error)
	ThreadReplies(ctx context.Context, threadID uuid.UUID, p db.ReplyPage) ([]thread.Stitch, error)
}

var _ SlackDiscoveryStore = (*db.Store)(nil)

// SlackChannels is discovery.Discovery's source for Slack. A thread weft took part
// in is read from Postgres, where weft stored every message it received
// there and every answer it gave, and from Slack only for what came before
// weft joined it; other threads, and the channel's top-level messages
// (which weft does not store), come from Slack, one page a read. Messages
// nobody replied to are never read again, and after a rate limit Slack is
// left alone for as long as it asked (a minute if it did not say), so a
// mention costs at most one conversations.history call per channel and
// cache period and one conversations.replies call per relevant thread weft
// has not stored (a few for a thread of more than 200 messages, read to
// its newest). Reads stay in the mention's workspace, which must be the
// token's, and stored threads in its organisation.
type SlackChannels struct {
	Reader SlackChannelReader
	Store  SlackDiscoveryStore
	Logger *slog.Logger
	Now    func() time.Time // nil: time.Now

	mu         sync.Mutex
	quietUntil map[string]time.Time // by workspace: no reads before, after a rate limit
}

var _ discovery.Source = (*SlackChannels)(nil)

// Platform implements discovery.Source.
func (*SlackChannels) Platform() string { return "Slack" }

// Channel implements discovery.Source: a mention at the top level of a
// channel opens a weft thread on the mention's own ts, with the mention as
// its initial prompt. A mention inside a Slack thread opens one on the
// thread's parent instead, and a direct message is no channel's: discovery
// is skipped for both.
func (s *SlackChannels) Channel(ctx context.Context, th *thread.Thread, mention *thread.Stitch) (*discovery.Channel, error) {
	att, err := s.Store.SlackAttachment(ctx, th.ID)
	if errors.Is(err, thread.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if mention.ExternalID != thread.SlackMessageID(att.TeamID, att.ChannelID, att.ThreadTS) || att.ChannelType == "im" {
		return nil, nil
	}
	_, org, err := s.Store.ThreadTenant(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	// Without the bot's id its own posts are ranked too: worse, not wrong.
	bot, err := s.Reader.BotUserID(ctx, att.TeamID)
	if err != nil {
		s.Logger.WarnContext(ctx, "slack bot user unknown; its own posts stay among those ranked", slog.String("team_id", att.TeamID), slog.Any("error", err))
	}
	return &discovery.Channel{Key: "slack:" + att.TeamID + "/" + att.ChannelID, ID: att.ChannelID, Team: att.TeamID,
		ThreadID: th.ID, Reply: att.ThreadTS, MentionID: att.ThreadTS, Org: org, BotUserID: bot}, nil
}

// Before implements discovery.Source.
func (*SlackChannels) Before(a, b string) bool { return TSBefore(a, b) }

// TopLevel implements discovery.Source.
func (s *SlackChannels) TopLevel(ctx context.Context, ch *discovery.Channel, n int) ([]discovery.ChannelMessage, error) {
	return slackRead(s, ch.Team, func() ([]discovery.ChannelMessage, error) {
		return s.Reader.TopLevel(ctx, ch.Team, ch.ID, ch.MentionID, n)
	})
}

// Thread implements discovery.Source.
func (s *SlackChannels) Thread(ctx context.Context, ch *discovery.Channel, root discovery.ChannelMessage, n int) ([]discovery.ChannelMessage, error) {
	if root.NoReplies {
		return nil, nil
	}
	stored, first, err := s.stored(ctx, ch, root.ID, n)
	if err != nil {
		return nil, err
	}
	if first != "" && (len(stored) >= n || first == root.ID) {
		return stored[max(0, len(stored)-n):], nil
	}
	// What weft did not see: what came before it joined the thread, or
	// all of a thread it never took part in.
	before, err := slackRead(s, ch.Team, func() ([]discovery.ChannelMessage, error) {
		return s.Reader.Replies(ctx, ch.Team, ch.ID, root.ID, first, n)
	})
	if err != nil {
		return nil, err
	}
	if first == "" {
		return before, nil
	}
	all := append(before, stored...)
	return all[max(0, len(all)-n):], nil
}

// stored is what weft stored of the thread under root, oldest first, and
// the ts of the first Slack message weft saw there: "" when it saw none,
// or tracks no such thread, or one of another organisation (read from
// Slack as any other then: its messages are this workspace's).
func (s *SlackChannels) stored(ctx context.Context, ch *discovery.Channel, rootTS string, n int) ([]discovery.ChannelMessage, string, error) {
	th, err := s.Store.ThreadBySlackThread(ctx, ch.Team, ch.ID, rootTS)
	if errors.Is(err, thread.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if _, org, err := s.Store.ThreadTenant(ctx, th.ID); err != nil || org != ch.Org {
		return nil, "", err
	}
	// Newest first, so that a long thread keeps its latest messages.
	stitches, err := s.Store.ThreadReplies(ctx, th.ID, db.ReplyPage{Newest: true, Limit: n})
	if err != nil {
		return nil, "", err
	}
	slices.Reverse(stitches)
	var out []discovery.ChannelMessage
	first := ""
	for _, st := range stitches {
		if st.Source == thread.PlatformSlack {
			if ts := SlackTS(st.ExternalID); ts != "" && (first == "" || TSBefore(ts, first)) {
				first = ts
			}
		}
		if !st.DeletedAt.IsZero() {
			continue
		}
		m := discovery.ChannelMessage{ID: SlackTS(st.ExternalID), Text: st.Content, At: st.CreatedAt}
		switch {
		case st.Author != nil:
			m.AuthorID, m.Author, m.Bot = st.Author.ID, st.Author.Name, st.Author.Bot
		case !st.Type.IsInput():
			m.Author, m.Bot = th.AgentName, true
		}
		out = append(out, m)
	}
	return out, first, nil
}

// slackRead runs a read in a workspace unless Slack asked to be left alone
// there, and starts such a pause when it refuses one for its rate limit
// (Slack limits each workspace's reads apart).
func slackRead(s *SlackChannels, team string, read func() ([]discovery.ChannelMessage, error)) ([]discovery.ChannelMessage, error) {
	now := s.now()
	s.mu.Lock()
	until := s.quietUntil[team]
	s.mu.Unlock()
	if now.Before(until) {
		return nil, fmt.Errorf("not reading Slack until %s: %w", until.Format(time.TimeOnly), ErrSlackRateLimited)
	}
	msgs, err := read()
	if errors.Is(err, ErrSlackRateLimited) {
		wait := retry.Hint(err)
		if wait <= 0 {
			wait = slackCooldown
		}
		s.mu.Lock()
		if t := now.Add(wait); t.After(s.quietUntil[team]) {
			if s.quietUntil == nil {
				s.quietUntil = map[string]time.Time{}
			}
			s.quietUntil[team] = t
		}
		s.mu.Unlock()
	}
	return msgs, err
}

// slackSearching is discovery's status line under the thread.
const slackSearching = "is searching this channel's threads…"

// Notify implements discovery.Source: the notice is the thread's status
// line ("weft is searching…"), which Slack shows under the thread until
// weft answers, rather than a message of its own in the conversation.
func (s *SlackChannels) Notify(ctx context.Context, ch *discovery.Channel) {
	if err := s.Reader.SetStatus(ctx, ch.Team, ch.ID, ch.Reply, slackSearching); err != nil {
		s.Logger.DebugContext(ctx, "slack discovery status", slog.String("thread_id", ch.ThreadID.String()), slog.Any("error", err))
	}
}

func (s *SlackChannels) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
