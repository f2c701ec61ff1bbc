package discord

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// RefStore finds a Discord thread's weft thread and its organisation.
// *db.Store implements it.
type RefStore interface {
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
	ThreadTenant(ctx context.Context, threadID uuid.UUID) (thread.Tenant, string, error)
}

// The platform resolves what people type, for continuing elsewhere.
var _ surface.Resolving = (*App)(nil)

// Refs finds the Discord threads people name by their link.
type Refs struct{ Store RefStore }

// Name is Discord.
func (Refs) Name() thread.Platform { return thread.PlatformDiscord }

// Hint is what names a Discord conversation.
func (Refs) Hint() string { return "a Discord thread's link" }

// Resolve is the thread attached to the Discord thread ref links, if it
// is of organisation: another organisation's is not found, as if it did
// not exist.
func (r Refs) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	id, ok := threadLink(ref)
	if !ok {
		return nil, thread.ErrNotFound
	}
	th, err := r.Store.ThreadByDiscordThread(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, theirs, err := r.Store.ThreadTenant(ctx, th.ID); err != nil {
		return nil, err
	} else if theirs != organisation {
		return nil, fmt.Errorf("discord thread %s: %w", id, thread.ErrNotFound)
	}
	return th, nil
}

// threadLinkPattern is a Discord thread's link: its server, then the
// thread.
var threadLinkPattern = regexp.MustCompile(`^<?https://(?:ptb\.|canary\.)?discord(?:app)?\.com/channels/[0-9]{17,20}/([0-9]{17,20})/?>?$`)

// threadLink reads a Discord thread's link as its id.
func threadLink(ref string) (string, bool) {
	m := threadLinkPattern.FindStringSubmatch(strings.TrimSpace(ref))
	if m == nil {
		return "", false
	}
	return m[1], true
}
