package replies

import (
	"cmp"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// SourceSlack is Slack's conversations.replies.
const SourceSlack Source = "slack"

// Slack reads Slack threads through conversations.replies. Its failures are
// *httpapi.Error values with get-thread-replies' codes. It retries what is
// transient itself (the origin puts retries in the Slack client), so replies
// does not retry it again.
type Slack interface {
	Replies(ctx context.Context, q SlackQuery) (SlackPage, error)
}

// SlackMembers tells whether a person is a member of a Slack
// conversation, for a request naming its requester. A Slack reader that
// is not one cannot honour a requester.
type SlackMembers interface {
	IsMember(ctx context.Context, q SlackQuery, userID string) (bool, error)
}

// SlackQuery is one conversations.replies call.
type SlackQuery struct {
	TeamID    string // the workspace; "" leaves it to the reader to find
	ChannelID string
	ThreadTS  string
	Cursor    string // Slack's next_cursor; "" for the first page
	Latest    string // only messages before this ts; "" for up to now
	Limit     int
}

// SlackPage is what one conversations.replies call returned: the parent
// first (on every page, as Slack sends it), then replies, oldest first.
type SlackPage struct {
	Messages   []SlackMessage
	HasMore    bool
	NextCursor string
}

// SlackMessage is a message as get-thread-replies.md shapes it: the parent
// or a reply of a Slack thread. Text is null for a deleted message.
type SlackMessage struct {
	TS      string  `json:"ts"`
	User    string  `json:"user,omitempty"`
	Text    *string `json:"text"`
	Edited  bool    `json:"edited"`
	Deleted bool    `json:"deleted"`
	Subtype *string `json:"subtype"`
}

// SlackRequest is get-thread-replies.md's GetThreadRepliesRequest.
type SlackRequest struct {
	// TeamID is the workspace, whose token reads the thread; "" means the
	// workspace of a channel weft has a thread in, else SLACK_BOT_TOKEN's.
	// (An extension of get-thread-replies.md, for several workspaces.)
	TeamID    string
	ChannelID string
	ThreadTS  string
	Limit     int    // 0: DefaultLimit; above MaxLimit: InvalidArgument
	Cursor    string // "" for the first page; else a response's NextCursor
	Order     Order  // "": Oldest
	// RequesterID is get-thread-replies.md's requester.userId: when set,
	// a requester who is not a member of the conversation is refused
	// (AuthorizationError), for weft's token may read more than they may.
	RequesterID string
}

// SlackResponse is get-thread-replies.md's GetThreadRepliesResponse.
type SlackResponse struct {
	Parent     *SlackMessage  `json:"parent,omitempty"`
	Replies    []SlackMessage `json:"replies"`
	NextCursor *string        `json:"nextCursor"`
	HasMore    bool           `json:"hasMore"`
}

// SlackWorkspace is the workspace a Slack thread in channelID is read in,
// for tenancy.Reach.Within: teamID when named, else the one weft has
// threads in that channel in, else the asker's own Slack workspace.
func SlackWorkspace(store Store, teamID, channelID string) tenancy.Locate {
	return func(ctx context.Context, asker thread.Tenant) (thread.Tenant, error) {
		if teamID != "" {
			return thread.SlackTenant(teamID), nil
		}
		team, err := store.SlackChannelTeam(ctx, channelID)
		switch {
		case errors.Is(err, thread.ErrNotFound) && asker.Kind == thread.TenantSlack:
			return asker, nil
		case err != nil:
			return thread.Tenant{}, err
		}
		return thread.SlackTenant(team), nil
	}
}

// Slack's id shapes: a conversation id (C public, G private, D direct) and
// a message ts ("1355517523.000005").
var (
	slackChannelRE = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)
	slackTSRE      = regexp.MustCompile(`^[0-9]{1,12}\.[0-9]{1,9}$`)
	slackTeamRE    = regexp.MustCompile(`^[TE][A-Z0-9]{2,}$`)
	slackUserRE    = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
)

// subtypeTombstone is what conversations.replies leaves of a deleted parent
// that still has replies.
const subtypeTombstone = "tombstone"

// maxNewestPages bounds how far a newest-first page walks a thread: Slack
// pages oldest first only, so the newest replies are at the end.
const maxNewestPages = 20

// GetSlack returns one page of a Slack thread's replies with its parent, in
// get-thread-replies.md's shape. Oldest first, Slack's own cursor is passed
// through (bound to the thread and the order); newest first, the cursor is
// the ts of the oldest reply returned so far. Failures are *httpapi.Error
// values.
func (s *Service) GetSlack(ctx context.Context, req SlackRequest) (*SlackResponse, error) {
	start := time.Now()
	s.metrics.requests.Inc()
	resp, err := s.getSlack(ctx, req)
	if err != nil {
		return nil, s.failed(ctx, start, req.ChannelID+"/"+req.ThreadTS, err)
	}
	s.metrics.successes.WithLabelValues(string(SourceSlack)).Inc()
	s.metrics.paged(SourceSlack, req.Cursor, resp.HasMore)
	s.metrics.latency.WithLabelValues("success").Observe(time.Since(start).Seconds())
	return resp, nil
}

// slackPage is a validated Slack request.
type slackPage struct {
	SlackRequest
	pos string // Slack's cursor (oldest) or a reply's ts (newest); "" on the first page
}

func (p slackPage) scope() string {
	return "slack " + p.TeamID + " " + p.ChannelID + " " + p.ThreadTS + " " + string(p.Order)
}

func (p slackPage) next(pos string) *string {
	c := threadview.EncodeCursor(threadview.CursorReplies, p.scope(), pos)
	return &c
}

func validateSlack(req SlackRequest) (slackPage, error) {
	p := slackPage{SlackRequest: req}
	switch {
	case !slackChannelRE.MatchString(req.ChannelID):
		return p, invalid("channelId %q is not a Slack conversation id", req.ChannelID)
	case !slackTSRE.MatchString(req.ThreadTS):
		return p, invalid("threadTs %q is not a Slack message ts", req.ThreadTS)
	case req.TeamID != "" && !slackTeamRE.MatchString(req.TeamID):
		return p, invalid("teamId %q is not a Slack workspace id", req.TeamID)
	case req.RequesterID != "" && !slackUserRE.MatchString(req.RequesterID):
		return p, invalid("requester.userId %q is not a Slack user id", req.RequesterID)
	}
	var err error
	if p.Limit, err = threadview.PageLimit(req.Limit); err != nil {
		return p, err
	}
	switch p.Order {
	case "":
		p.Order = Oldest
	case Oldest, Newest:
	default:
		return p, invalid("order must be oldest or newest")
	}
	if req.Cursor != "" {
		if err := threadview.DecodeCursor(req.Cursor, threadview.CursorReplies, p.scope(), &p.pos); err != nil {
			return p, err
		}
		if p.pos == "" || p.Order == Newest && !slackTSRE.MatchString(p.pos) {
			return p, invalid("cursor is not one this API returned")
		}
	}
	return p, nil
}

func (s *Service) getSlack(ctx context.Context, req SlackRequest) (*SlackResponse, error) {
	p, err := validateSlack(req)
	if err != nil {
		return nil, err
	}
	if s.slack == nil {
		return nil, &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "Slack is not configured"}
	}
	fetch := func(q SlackQuery) (SlackPage, error) { return s.slack.Replies(ctx, q) }
	q := SlackQuery{TeamID: p.TeamID, ChannelID: p.ChannelID, ThreadTS: p.ThreadTS, Limit: p.Limit}
	if err := s.authorize(ctx, q, p.RequesterID); err != nil {
		return nil, err
	}
	deleted, err := s.slackDeleted(ctx, p)
	if err != nil {
		return nil, err
	}
	if p.Order == Oldest {
		// The cursor is Slack's and the ts the previous page ended at,
		// which bounds the deleted replies this page shows.
		var lo string
		q.Cursor, lo, _ = strings.Cut(p.pos, " ")
		pg, err := fetch(q)
		if err != nil {
			return nil, err
		}
		resp := slackResponse(p.ThreadTS, pg.Messages)
		hi := ""
		if pg.NextCursor != "" {
			// A page without replies (the parent alone) ends where the
			// previous one did, or at the parent: it shows no deletion.
			hi = cmp.Or(lo, p.ThreadTS)
			if n := len(resp.Replies); n > 0 {
				hi = resp.Replies[n-1].TS
			}
			resp.HasMore, resp.NextCursor = true, p.next(pg.NextCursor+" "+hi)
		}
		resp.Replies = withDeleted(resp.Replies, deleted, lo, hi, false)
		return s.withParent(resp, p, fetch)
	}
	// Newest first: read the thread up to the cursor's ts, keep its end.
	q.Latest, q.Limit = p.pos, MaxLimit
	var all []SlackMessage
	resp := &SlackResponse{Replies: []SlackMessage{}}
	for range maxNewestPages {
		pg, err := fetch(q)
		if err != nil {
			return nil, err
		}
		r := slackResponse(p.ThreadTS, pg.Messages)
		if resp.Parent == nil {
			resp.Parent = r.Parent
		}
		all = append(all, r.Replies...)
		if pg.NextCursor == "" {
			break
		}
		q.Cursor = pg.NextCursor
	}
	all = withDeleted(all, deleted, "", "", false)
	if p.pos != "" {
		// Slack's latest is exclusive unless inclusive is set; drop the
		// cursor's own reply should a fake or Slack include it anyway.
		all = slices.DeleteFunc(all, func(m SlackMessage) bool { return !tsLess(m.TS, p.pos) })
	}
	slices.Reverse(all)
	if len(all) > p.Limit {
		all = all[:p.Limit]
		resp.HasMore, resp.NextCursor = true, p.next(all[len(all)-1].TS)
	}
	resp.Replies = all
	return s.withParent(resp, p, fetch)
}

// authorize refuses a requester who is not a member of the conversation
// (get-thread-replies.md 3.x: AuthorizationError, told apart from
// NotFound); no requester, no check.
func (s *Service) authorize(ctx context.Context, q SlackQuery, requester string) error {
	if requester == "" {
		return nil
	}
	m, ok := s.slack.(SlackMembers)
	if !ok {
		return &httpapi.Error{Code: httpapi.CodeUnavailable, Message: "weft cannot check Slack membership here"}
	}
	member, err := m.IsMember(ctx, q, requester)
	if err != nil {
		return err
	}
	if !member {
		return &httpapi.Error{Code: httpapi.CodeAuthorization, Message: "the requester is not a member of this Slack conversation"}
	}
	return nil
}

// withParent makes sure a page carries its parent: Slack sends it first on
// every page, but should it not, one more call reads it.
func (s *Service) withParent(resp *SlackResponse, p slackPage, fetch func(SlackQuery) (SlackPage, error)) (*SlackResponse, error) {
	if resp.Parent != nil {
		return resp, nil
	}
	pg, err := fetch(SlackQuery{TeamID: p.TeamID, ChannelID: p.ChannelID, ThreadTS: p.ThreadTS, Limit: 1})
	if err != nil {
		return nil, err
	}
	if r := slackResponse(p.ThreadTS, pg.Messages); r.Parent != nil {
		resp.Parent = r.Parent
		return resp, nil
	}
	return nil, notFound("Slack thread %s in %s has no parent message", p.ThreadTS, p.ChannelID)
}

// slackResponse splits a page into its parent and replies, deleted
// messages marked and their text nulled.
func slackResponse(threadTS string, msgs []SlackMessage) *SlackResponse {
	resp := &SlackResponse{Replies: make([]SlackMessage, 0, len(msgs))}
	for _, m := range msgs {
		if m.Subtype != nil && *m.Subtype == subtypeTombstone {
			m.Deleted = true
		}
		if m.Deleted {
			m.Text = nil
		}
		if m.TS == threadTS {
			resp.Parent = &m
			continue
		}
		resp.Replies = append(resp.Replies, m)
	}
	return resp
}

// tsLess orders Slack timestamps: seconds, then the sequence after the dot.
func tsLess(a, b string) bool {
	ai, af, _ := cutTS(a)
	bi, bf, _ := cutTS(b)
	if len(ai) != len(bi) {
		return len(ai) < len(bi)
	}
	if ai != bi {
		return ai < bi
	}
	return af < bf
}

func cutTS(ts string) (sec, frac string, ok bool) {
	for i := range len(ts) {
		if ts[i] == '.' {
			return ts[:i], ts[i+1:], true
		}
	}
	return ts, "", false
}
