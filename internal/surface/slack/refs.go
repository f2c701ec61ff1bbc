package slack

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// RefStore finds a Slack thread's weft thread. *db.Store implements it.
type RefStore interface {
	ThreadBySlackLink(ctx context.Context, channelID, threadTS, organisation string) (*thread.Thread, error)
}

// The platform resolves what people type, for continuing elsewhere.
var _ surface.Resolving = (*App)(nil)

// Refs finds the Slack threads people name by a message's link.
type Refs struct{ Store RefStore }

// Name is Slack.
func (Refs) Name() thread.Platform { return thread.PlatformSlack }

// Hint is what names a Slack conversation.
func (Refs) Hint() string { return "a Slack thread's link" }

// Resolve is the thread of the Slack thread ref links (its permalink, or
// a reply's), if it is of organisation.
func (r Refs) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	channel, ts, ok := threadLink(ref)
	if !ok {
		return nil, thread.ErrNotFound
	}
	return r.Store.ThreadBySlackLink(ctx, channel, ts, organisation)
}

// threadLink reads a Slack message permalink,
// https://<workspace>.slack.com/archives/C123/p1700000000123456, as its
// channel and thread: the message's ts (1700000000.123456), or for a
// reply the parent's, which its link carries as thread_ts. Slack's <url>
// and <url|label> forms are read too.
func threadLink(ref string) (channelID, threadTS string, ok bool) {
	ref = strings.TrimSpace(ref)
	if strings.HasPrefix(ref, "<") && strings.HasSuffix(ref, ">") {
		ref, _, _ = strings.Cut(ref[1:len(ref)-1], "|")
	}
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "https" || !strings.HasSuffix(u.Hostname(), ".slack.com") {
		return "", "", false
	}
	m := pathPattern.FindStringSubmatch(u.Path)
	if m == nil {
		return "", "", false
	}
	threadTS = m[2] + "." + m[3]
	if parent := u.Query().Get("thread_ts"); tsPattern.MatchString(parent) {
		threadTS = parent
	}
	return m[1], threadTS, true
}

// Patterns of a Slack permalink's path (/archives/<channel>/p<ts without
// its dot>) and of a ts.
var (
	pathPattern = regexp.MustCompile(`^/archives/([A-Z0-9]{2,})/p([0-9]{10})([0-9]{6})/?$`)
	tsPattern   = regexp.MustCompile(`^[0-9]{10}\.[0-9]{6}$`)
)
