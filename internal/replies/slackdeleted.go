package replies

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// slackThreads finds the weft thread attached to a Slack thread.
// *db.Store implements it; a Store that does not leaves Slack threads
// read live without what weft stored of their deletions.
type slackThreads interface {
	SlackChannelTeam(ctx context.Context, channelID string) (string, error)
	ThreadBySlackThread(ctx context.Context, teamID, channelID, threadTS string) (*thread.Thread, error)
}

var _ slackThreads = (*db.Store)(nil)

// maxDeletedPages bounds the read of a stored thread for its deletions.
const maxDeletedPages = 10

// slackDeleted is what weft stored of the replies deleted from a Slack
// thread it is in, as get-thread-replies.md shows them (deleted, text
// null), oldest first. Slack's conversations.replies no longer returns a
// deleted reply; weft recorded its message_deleted event.
func (s *Service) slackDeleted(ctx context.Context, p slackPage) ([]SlackMessage, error) {
	st, ok := s.store.(slackThreads)
	if !ok {
		return nil, nil
	}
	team := p.TeamID
	if team == "" {
		var err error
		if team, err = st.SlackChannelTeam(ctx, p.ChannelID); errors.Is(err, thread.ErrNotFound) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
	}
	th, err := st.ThreadBySlackThread(ctx, team, p.ChannelID, p.ThreadTS)
	if errors.Is(err, thread.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return s.deletedStitches(ctx, th.ID, p.ThreadTS)
}

func (s *Service) deletedStitches(ctx context.Context, id uuid.UUID, threadTS string) ([]SlackMessage, error) {
	var out []SlackMessage
	page := db.ReplyPage{Limit: db.MaxReplyPage}
	for range maxDeletedPages {
		stitches, err := s.store.ThreadReplies(ctx, id, page)
		if err != nil {
			return nil, err
		}
		for _, st := range stitches {
			ts := st.ExternalID[strings.LastIndexByte(st.ExternalID, '/')+1:]
			if st.DeletedAt.IsZero() || st.Source != thread.PlatformSlack || !slackTSRE.MatchString(ts) || ts == threadTS {
				continue
			}
			m := SlackMessage{TS: ts, Deleted: true}
			if st.Author != nil {
				m.User = st.Author.ID
			}
			out = append(out, m)
		}
		if len(stitches) < page.Limit {
			break
		}
		page.After = stitches[len(stitches)-1].Seq
	}
	return out, nil
}

// withDeleted puts the deleted replies whose ts lies in (lo, hi] among a
// page's replies, in the page's order ("" leaves a bound open); one Slack
// still returns is marked deleted in its place.
func withDeleted(replies, deleted []SlackMessage, lo, hi string, newest bool) []SlackMessage {
	for _, d := range deleted {
		if lo != "" && !tsLess(lo, d.TS) || hi != "" && tsLess(hi, d.TS) {
			continue
		}
		if i := slices.IndexFunc(replies, func(m SlackMessage) bool { return m.TS == d.TS }); i >= 0 {
			replies[i].Deleted, replies[i].Text = true, nil
			continue
		}
		replies = append(replies, d)
	}
	slices.SortStableFunc(replies, func(a, b SlackMessage) int {
		switch {
		case a.TS == b.TS:
			return 0
		case tsLess(a.TS, b.TS) != newest:
			return -1
		}
		return 1
	})
	return replies
}
