package db

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

func queueAttachSlack(ctx context.Context, p *pipeline, s *thread.SlackAttachment) {
	typ := s.ChannelType
	if typ == "" {
		typ = "channel"
	}
	arg := dbsqlc.InsertSlackAttachmentParams{
		ThreadID: s.ThreadID, TeamID: s.TeamID, ChannelID: s.ChannelID, ThreadTs: s.ThreadTS,
		ChannelType: typ, CreatedBy: s.CreatedBy,
	}
	p.add(func(q *dbsqlc.Queries) error { return translate(q.InsertSlackAttachment(ctx, arg)) })
}

// AttachSlack attaches an existing thread to a Slack thread. A Slack thread
// attached elsewhere fails with thread.ErrSlackThreadAttached.
func (q *Queries) AttachSlack(ctx context.Context, s thread.SlackAttachment) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return q.attach(ctx, s.ThreadID, func(p *pipeline) { queueAttachSlack(ctx, p, &s) })
}

// SlackAttachment returns a thread's Slack attachment, or thread.ErrNotFound.
func (q *Queries) SlackAttachment(ctx context.Context, threadID uuid.UUID) (*thread.SlackAttachment, error) {
	s, err := slackOf(q.gen.SlackAttachment(ctx, threadID))
	if err != nil {
		return nil, fmt.Errorf("slack attachment: %w", err)
	}
	return s, nil
}

// ThreadBySlackThread returns the thread attached to a Slack thread, or
// thread.ErrNotFound.
func (q *Queries) ThreadBySlackThread(ctx context.Context, teamID, channelID, threadTS string) (*thread.Thread, error) {
	t, err := threadOf(q.gen.ThreadBySlackThread(ctx, dbsqlc.ThreadBySlackThreadParams{TeamID: teamID, ChannelID: channelID, ThreadTs: threadTS}))
	if err != nil {
		return nil, fmt.Errorf("thread by slack thread: %w", err)
	}
	return t, nil
}

// ThreadBySlackLink returns the thread attached to the Slack thread of a
// channel and parent ts whose workspace is in organisation, as a permalink
// names it, or thread.ErrNotFound.
func (q *Queries) ThreadBySlackLink(ctx context.Context, channelID, threadTS, organisation string) (*thread.Thread, error) {
	t, err := threadOf(q.gen.ThreadBySlackLink(ctx, dbsqlc.ThreadBySlackLinkParams{ChannelID: channelID, ThreadTs: threadTS, Organisation: organisation}))
	if err != nil {
		return nil, fmt.Errorf("thread by slack link: %w", err)
	}
	return t, nil
}

// SlackChannelTeam returns the workspace of a channel weft has a Slack
// thread in, or thread.ErrNotFound.
func (q *Queries) SlackChannelTeam(ctx context.Context, channelID string) (string, error) {
	team, err := q.gen.SlackChannelTeam(ctx, channelID)
	if err != nil {
		return "", fmt.Errorf("slack channel team: %w", translate(err))
	}
	return team, nil
}

// SetSlackActive marks a Slack attachment active or not; a Slack thread weft
// does not track fails with thread.ErrNotFound.
func (q *Queries) SetSlackActive(ctx context.Context, t thread.SlackTarget, active bool) error {
	n, err := q.gen.SetSlackActive(ctx, dbsqlc.SetSlackActiveParams{IsActive: active, TeamID: t.TeamID, ChannelID: t.ChannelID, ThreadTs: t.ThreadTS})
	if err != nil {
		return fmt.Errorf("set slack active: %w", translate(err))
	}
	if n == 0 {
		return fmt.Errorf("set slack active: %w", thread.ErrNotFound)
	}
	return nil
}

func slackOf(r dbsqlc.SlackThreadMetadatum, err error) (*thread.SlackAttachment, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &thread.SlackAttachment{
		ThreadID: r.ThreadID, TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTs,
		ChannelType: r.ChannelType, CreatedBy: r.CreatedBy, Active: r.IsActive,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, nil
}

// PreviousSlackConversation returns the latest thread of att's
// conversation (a DM) opened before att's and active since, with its
// newest messages (at most limit, oldest first), or thread.ErrNotFound.
func (q *Queries) PreviousSlackConversation(ctx context.Context, att *thread.SlackAttachment, since time.Time, limit int) (*thread.Thread, []thread.Stitch, error) {
	t, err := threadOf(q.gen.PreviousSlackThread(ctx, dbsqlc.PreviousSlackThreadParams{TeamID: att.TeamID, ChannelID: att.ChannelID,
		BeforeTs: att.ThreadTS, Since: since}))
	if err != nil {
		return nil, nil, fmt.Errorf("previous slack thread: %w", err)
	}
	msgs, err := q.ThreadReplies(ctx, t.ID, ReplyPage{Newest: true, Limit: limit})
	if err != nil {
		return nil, nil, err
	}
	slices.Reverse(msgs)
	return t, msgs, nil
}
