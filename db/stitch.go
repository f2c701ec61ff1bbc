package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// AppendStitch adds s at the end of its thread's chain and returns it with
// its id, position and predecessor filled in. It is safe under concurrency:
// appends to one thread are serialized by the thread row's lock, so the chain
// never forks. A stitch whose (Source, ExternalID) is already stored fails
// with thread.ErrDuplicateExternalID; an unknown thread with
// thread.ErrNotFound.
func (q *Queries) AppendStitch(ctx context.Context, s thread.Stitch) (*thread.Stitch, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.ID == uuid.Nil {
		s.ID = thread.NewID()
	}
	// One statement, one row lock taken first: under READ COMMITTED it
	// cannot deadlock or fail to serialize, so there is nothing to retry.
	arg := appendStitchParams(&s)
	row, err := q.gen.AppendStitch(ctx, arg)
	out, err := appended(arg, row, err)
	if err != nil {
		return nil, fmt.Errorf("append stitch: %w", err)
	}
	return out, nil
}

// StitchPage selects a window of a thread's stitches by position. After and
// Before are exclusive bounds on Seq (0: unbounded). Newest reads backwards
// from the end; the result is always in chain order.
type StitchPage struct {
	After  int64
	Before int64
	Limit  int
	Newest bool
}

// MaxStitchPage bounds one read of a thread's stitches.
const MaxStitchPage = 1000

// Stitches reads a window of a thread's stitches, in chain order.
func (q *Queries) Stitches(ctx context.Context, threadID uuid.UUID, p StitchPage) ([]thread.Stitch, error) {
	out, err := stitchWindow(ctx, q.gen, threadID, p, false)
	if err != nil {
		return nil, fmt.Errorf("read stitches: %w", err)
	}
	if p.Newest {
		slices.Reverse(out)
	}
	return out, nil
}

// stitchWindow reads the stitches of a window, only the messages of the
// conversation when messagesOnly (see ThreadReplies), in the order the
// window reads (newest first when p.Newest).
func stitchWindow(ctx context.Context, q *dbsqlc.Queries, threadID uuid.UUID, p StitchPage, messagesOnly bool) ([]thread.Stitch, error) {
	if p.Limit <= 0 || p.Limit > MaxStitchPage {
		p.Limit = MaxStitchPage
	}
	arg := dbsqlc.StitchWindowAscParams{
		ThreadID: threadID, After: p.After, Before: p.Before, MessagesOnly: messagesOnly, MaxRows: int32(p.Limit),
	}
	if p.Newest {
		rows, err := q.StitchWindowDesc(ctx, dbsqlc.StitchWindowDescParams(arg))
		return mapAll(rows, err, stitchOf)
	}
	rows, err := q.StitchWindowAsc(ctx, arg)
	return mapAll(rows, err, stitchOf)
}

// Stitch returns one stitch by id.
func (q *Queries) Stitch(ctx context.Context, id uuid.UUID) (*thread.Stitch, error) {
	s, err := stitchOf(q.gen.Stitch(ctx, id))
	if err != nil {
		return nil, fmt.Errorf("get stitch %s: %w", id, err)
	}
	return s, nil
}

// StitchByExternalID returns the stitch a platform event became.
func (q *Queries) StitchByExternalID(ctx context.Context, source thread.Platform, externalID string) (*thread.Stitch, error) {
	s, err := stitchOf(q.gen.StitchByExternalID(ctx, dbsqlc.StitchByExternalIDParams{
		SourcePlatform: string(source), ExternalID: externalID,
	}))
	if err != nil {
		return nil, fmt.Errorf("stitch by external id: %w", err)
	}
	return s, nil
}

// StitchEdit is a platform's edit or delete of a message already stored.
type StitchEdit struct {
	Content   string
	EditedAt  time.Time // set for an edit
	DeletedAt time.Time // set for a delete
}

// EditStitch records an edit or delete of the stitch a platform event became:
// the latest text, and when. It never touches the chain. An edit that
// leaves the text as stored is none: thread.ErrNotFound, as for a message
// never stored.
func (q *Queries) EditStitch(ctx context.Context, source thread.Platform, externalID string, e StitchEdit) (*thread.Stitch, error) {
	s, err := stitchOf(q.gen.EditStitch(ctx, dbsqlc.EditStitchParams{
		SourcePlatform: string(source), ExternalID: externalID,
		Content: &e.Content, EditedAt: nullTime(e.EditedAt), DeletedAt: nullTime(e.DeletedAt),
	}))
	if err != nil {
		return nil, fmt.Errorf("edit stitch: %w", err)
	}
	return s, nil
}

// InputSurface returns where the thread's newest input came from, which is
// where its answer goes: the platform and, on it, the Linear session or
// the Discord thread that is still attached. A thread whose newest input
// came from no platform, or from one it is no longer attached on (an
// archived Discord thread), returns "".
func (q *Queries) InputSurface(ctx context.Context, threadID uuid.UUID) (thread.Platform, string, error) {
	p, target, err := inputSurfaceOf(q.gen.InputSurface(ctx, threadID))
	if err != nil {
		return "", "", fmt.Errorf("input surface: %w", err)
	}
	return p, target, nil
}

// inputSurfaceOf reads the surface from InputSurface's row: a thread
// without input has none.
func inputSurfaceOf(r dbsqlc.InputSurfaceRow, err error) (thread.Platform, string, error) {
	if err != nil {
		if err = translate(err); errors.Is(err, thread.ErrNotFound) {
			return "", "", nil
		}
		return "", "", err
	}
	switch src := thread.Platform(str(r.SourcePlatform)); {
	case src == thread.PlatformLinear && r.SessionID != nil:
		return thread.PlatformLinear, *r.SessionID, nil
	case src == thread.PlatformDiscord && r.DiscordThreadID != nil && r.IsActive != nil && *r.IsActive:
		return thread.PlatformDiscord, *r.DiscordThreadID, nil
	case src == thread.PlatformSlack && r.SlackTeamID != nil && r.SlackActive != nil && *r.SlackActive:
		return thread.PlatformSlack, thread.SlackTarget{TeamID: *r.SlackTeamID, ChannelID: *r.SlackChannelID, ThreadTS: *r.SlackThreadTs}.String(), nil
	case src == thread.PlatformGitHub && r.GithubInstallationID != nil && r.GithubActive != nil && *r.GithubActive:
		return thread.PlatformGitHub, githubTargetOf(r).String(), nil
	}
	return "", "", nil
}

// attachedOf lists the live attachments in InputSurface's row.
func attachedOf(r dbsqlc.InputSurfaceRow) []thread.Surface {
	var out []thread.Surface
	if r.SessionID != nil {
		out = append(out, thread.Surface{Platform: thread.PlatformLinear, Target: *r.SessionID})
	}
	if r.DiscordThreadID != nil && r.IsActive != nil && *r.IsActive {
		out = append(out, thread.Surface{Platform: thread.PlatformDiscord, Target: *r.DiscordThreadID})
	}
	if r.SlackTeamID != nil && r.SlackActive != nil && *r.SlackActive {
		out = append(out, thread.Surface{Platform: thread.PlatformSlack,
			Target: thread.SlackTarget{TeamID: *r.SlackTeamID, ChannelID: *r.SlackChannelID, ThreadTS: *r.SlackThreadTs}.String()})
	}
	if r.GithubInstallationID != nil && r.GithubActive != nil && *r.GithubActive {
		out = append(out, thread.Surface{Platform: thread.PlatformGitHub, Target: githubTargetOf(r).String()})
	}
	return out
}

// githubTargetOf is the GitHub attachment's outbox target in
// InputSurface's row, which has one.
func githubTargetOf(r dbsqlc.InputSurfaceRow) thread.GitHubTarget {
	t := thread.GitHubTarget{InstallationID: *r.GithubInstallationID, Owner: *r.GithubOwner, Repo: *r.GithubRepo,
		Number: int(*r.GithubNumber)}
	if r.GithubReviewRoot != nil {
		t.ReviewRoot = *r.GithubReviewRoot
	}
	return t
}
