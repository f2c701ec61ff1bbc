package linear

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// RefStore finds a Linear session's thread by an issue key or id or a
// session id. *db.Store implements it.
type RefStore interface {
	ThreadByLinearRef(ctx context.Context, ref, organisation string) (*thread.Thread, error)
}

// The platform resolves what people type, for continuing elsewhere.
var _ surface.Resolving = (*App)(nil)

// Refs finds the Linear sessions' threads people name: by an issue key
// like ENG-123, an issue or session id, or a Linear URL holding one.
type Refs struct{ Store RefStore }

// Name is Linear.
func (Refs) Name() thread.Platform { return thread.PlatformLinear }

// Hint is what names a Linear conversation.
func (Refs) Hint() string { return "a Linear issue key (ENG-123) or URL" }

// Resolve is the thread of the Linear session ref names, of organisation.
// A link to another site is not Linear's to read: an issue key in another
// platform's host name must not find an issue.
func (r Refs) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	if u, err := url.Parse(strings.TrimSpace(ref)); err == nil && (u.Scheme == "https" || u.Scheme == "http") &&
		u.Hostname() != "linear.app" && !strings.HasSuffix(u.Hostname(), ".linear.app") {
		return nil, thread.ErrNotFound
	}
	var err error
	for _, cand := range linearRefs(ref) {
		var th *thread.Thread
		if th, err = r.Store.ThreadByLinearRef(ctx, cand, organisation); !errors.Is(err, thread.ErrNotFound) {
			return th, err
		}
	}
	return nil, err
}

// Patterns of what a Linear URL names: a session or issue UUID, an issue
// key (team key, dash, number).
var (
	uuidPattern     = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	issueKeyPattern = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9]{0,9}-[0-9]+\b`)
)

// linearRefs lists what ref may name, most specific first: the text as
// typed, then an issue key or UUID found in it (a Linear URL holds one).
func linearRefs(ref string) []string {
	ref = strings.TrimSpace(ref)
	out := []string{ref}
	for _, re := range []*regexp.Regexp{uuidPattern, issueKeyPattern} {
		for _, m := range re.FindAllString(ref, -1) {
			if m != ref {
				out = append(out, m)
			}
		}
	}
	return out
}
