package tools

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// ReachStore is what Reach reads of stored threads. *db.Store implements it.
type ReachStore interface {
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
}

var _ ReachStore = (*db.Store)(nil)

// ErrOutOfReach refuses a conversation another server's or workspace's
// thread.
var ErrOutOfReach = errors.New("that thread is in another Discord server or Linear workspace than this conversation")

// Reach decides which threads a conversation's tools may read, so that a
// model (or text injected into its context) cannot carry one tenant's
// conversation into another's: its own thread; weft threads of its Discord
// server or Linear workspace; Discord threads of its server or, for a
// conversation not in Discord, of the allowed servers, as the Discord
// search tools allow. A conversation on no platform (the CLI, the API) is
// the operator's and reads any thread, as the REST API and MCP do.
type Reach struct {
	Store ReachStore
	// Reader finds the server of a Discord thread weft does not track; nil
	// without Discord, when such a thread cannot be read anyway.
	Reader DiscordReader
	// Guilds is DISCORD_ALLOWED_GUILDS; empty allows any server.
	Guilds []string
}

// places is where a thread lives.
type places struct{ guild, workspace string }

// Check returns nil when the conversation of thread from may read target
// (a weft thread id or a Discord thread id), and ErrOutOfReach when it may
// not. A target that is no thread at all is left to the reader to refuse.
func (r *Reach) Check(ctx context.Context, from uuid.UUID, target string) error {
	if target == "" || target == from.String() {
		return nil
	}
	me, err := r.placesOf(ctx, from)
	if err != nil || me == (places{}) {
		return err
	}
	id, them, found, err := r.resolve(ctx, target)
	if err != nil || !found || id == from {
		return err
	}
	if id != uuid.Nil {
		if them, err = r.placesOf(ctx, id); err != nil {
			return err
		}
	}
	switch {
	case me.guild != "" && them.guild == me.guild, me.workspace != "" && them.workspace == me.workspace:
		return nil
	case me.guild == "" && them.guild != "" && (len(r.Guilds) == 0 || slices.Contains(r.Guilds, them.guild)):
		return nil
	}
	return ErrOutOfReach
}

// CheckSlack returns nil when the conversation of thread from may read a
// Slack thread by its channel and ts, and ErrOutOfReach when it may not:
// weft reads Slack with one workspace's token, so a conversation of a
// Discord server or a Linear workspace may not reach into it.
func (r *Reach) CheckSlack(ctx context.Context, from uuid.UUID) error {
	me, err := r.placesOf(ctx, from)
	if err != nil {
		return err
	}
	if me != (places{}) {
		return ErrOutOfReach
	}
	return nil
}

// resolve finds target's stored thread, or, for a Discord thread weft does
// not track, the server it is in. found is false when there is neither.
func (r *Reach) resolve(ctx context.Context, target string) (id uuid.UUID, untracked places, found bool, err error) {
	if parsed, perr := uuid.Parse(target); perr == nil {
		if _, err := r.Store.Thread(ctx, parsed); err != nil {
			return uuid.Nil, places{}, false, ignoreNotFound(err)
		}
		return parsed, places{}, true, nil
	}
	if !thread.IsSnowflake(target) {
		return uuid.Nil, places{}, false, nil
	}
	th, err := r.Store.ThreadByDiscordThread(ctx, target)
	switch {
	case err == nil:
		return th.ID, places{}, true, nil
	case !errors.Is(err, thread.ErrNotFound) || r.Reader == nil:
		return uuid.Nil, places{}, false, ignoreNotFound(err)
	}
	ch, err := r.Reader.Channel(ctx, target)
	if err != nil {
		return uuid.Nil, places{}, false, ignoreNotFound(err)
	}
	return uuid.Nil, places{guild: ch.GuildID}, true, nil
}

// placesOf reads a stored thread's server and workspace.
func (r *Reach) placesOf(ctx context.Context, id uuid.UUID) (places, error) {
	var p places
	if att, err := r.Store.DiscordAttachment(ctx, id); err == nil {
		p.guild = att.GuildID
	} else if !errors.Is(err, thread.ErrNotFound) {
		return p, err
	}
	if att, err := r.Store.LinearAttachment(ctx, id); err == nil {
		p.workspace = att.WorkspaceID
	} else if !errors.Is(err, thread.ErrNotFound) {
		return p, err
	}
	return p, nil
}

// ignoreNotFound lets a missing thread through to the reader, which
// answers it as not found.
func ignoreNotFound(err error) error {
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	return err
}
