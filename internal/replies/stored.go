package replies

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// fromStore reads a page of a stored thread: the parent is its first input,
// the replies its messages after it (see the package doc).
func (s *Service) fromStore(ctx context.Context, th *thread.Thread, p page, src Source) (*Response, error) {
	resp := &Response{ThreadID: p.threadID, Source: src, Replies: []Message{}}
	var parentSeq int64
	parent, err := s.store.ThreadParent(ctx, th.ID)
	switch {
	case err == nil:
		parentSeq = parent.Seq
		m := storedMessage(th, parent)
		resp.Parent = &m
	case !errors.Is(err, thread.ErrNotFound):
		return nil, err
	}
	win := db.ReplyPage{After: parentSeq, Limit: p.limit + 1, Newest: p.newest()}
	if p.pos != "" {
		pos, err := strconv.ParseInt(p.pos, 10, 64)
		if err != nil || pos < 1 {
			return nil, invalid("cursor is not one this API returned")
		}
		if p.newest() {
			win.Before = pos
		} else {
			win.After = max(win.After, pos)
		}
	}
	stitches, err := s.store.ThreadReplies(ctx, th.ID, win)
	if err != nil {
		return nil, err
	}
	if len(stitches) > p.limit {
		stitches = stitches[:p.limit]
		resp.HasMore = true
		resp.NextCursor = p.next(strconv.FormatInt(stitches[len(stitches)-1].Seq, 10))
	}
	for i := range stitches {
		resp.Replies = append(resp.Replies, storedMessage(th, &stitches[i]))
	}
	return resp, nil
}

// storedMessage is a stitch as a message. Stitches without an author are
// weft's own, written as the thread's agent; an initial prompt without one
// came from the API or the CLI and stays anonymous.
func storedMessage(th *thread.Thread, s *thread.Stitch) Message {
	m := Message{
		TS: timestamp(s.CreatedAt), ID: s.ID.String(), ExternalID: s.ExternalID, Subtype: string(s.Type),
		Edited: !s.EditedAt.IsZero(), Deleted: !s.DeletedAt.IsZero(), CreatedAt: s.CreatedAt,
	}
	// A Slack message keeps its own ts (its external id ends with it).
	if ts := s.ExternalID[strings.LastIndexByte(s.ExternalID, '/')+1:]; s.Source == thread.PlatformSlack && slackTSRE.MatchString(ts) {
		m.TS = ts
	}
	switch {
	case s.Author != nil:
		m.Author = &threadview.Author{ID: s.Author.ID, Name: s.Author.Name, Bot: s.Author.Bot}
		m.User = s.Author.ID
	case !s.Type.IsInput():
		m.Author = &threadview.Author{Name: th.AgentName, Bot: true}
	}
	if m.Edited {
		at := s.EditedAt
		m.EditedAt = &at
	}
	if !m.Deleted {
		text := s.Content
		m.Text = &text
	}
	return m
}
