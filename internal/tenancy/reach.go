// Package tenancy is the organisation boundary's policy: Reach decides
// which threads a conversation's tools may read, so that nothing carries
// one organisation's conversation into another's. Tenants and
// organisations themselves are thread.Tenant, stored and resolved by db.
package tenancy

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
	Organisations
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
	SlackChannelTeam(ctx context.Context, channelID string) (string, error)
}

// Organisations finds which organisation a thread or a tenant belongs to.
// *db.Store implements it.
type Organisations interface {
	// ThreadTenant returns a thread's tenant and organisation: none and ""
	// for a thread on no platform.
	ThreadTenant(ctx context.Context, threadID uuid.UUID) (thread.Tenant, string, error)
	// Organisation returns a tenant's organisation: linked, else its own.
	Organisation(ctx context.Context, t thread.Tenant) (string, error)
}

var _ ReachStore = (*db.Store)(nil)

// ChannelGuild returns the server of a Discord channel ("" for a direct
// message); a missing channel fails wrapping thread.ErrNotFound.
type ChannelGuild func(ctx context.Context, channelID string) (string, error)

// ErrOutOfReach refuses a conversation another organisation's thread.
var ErrOutOfReach = errors.New("that thread belongs to another organisation than this conversation")

// Reach decides which threads a conversation's tools may read, so that a
// model (or text injected into its context) cannot carry one organisation's
// conversation into another's: its own thread, and threads (weft's, or
// Discord threads weft does not track) of its organisation, the Discord
// ones only in the allowed servers. A tenant no operator linked is an
// organisation of its own. A conversation on no platform (the CLI, the
// API) is the operator's and reads any thread, as the REST API and MCP do.
type Reach struct {
	Store ReachStore
	// Guild finds the server of a Discord thread weft does not track; nil
	// without Discord, when such a thread cannot be read anyway.
	Guild ChannelGuild
	// Guilds is DISCORD_ALLOWED_GUILDS; empty allows any server.
	Guilds []string
}

// Check returns nil when the conversation of thread from may read target
// (a weft thread id or a Discord thread id), and ErrOutOfReach when it may
// not. A target that is no thread at all is left to the reader to refuse.
func (r *Reach) Check(ctx context.Context, from uuid.UUID, target string) error {
	if target == "" || target == from.String() {
		return nil
	}
	_, mine, err := r.Store.ThreadTenant(ctx, from)
	if err != nil || mine == "" {
		return err
	}
	theirs, found, err := r.resolve(ctx, target)
	if err != nil || !found {
		return err
	}
	if theirs != mine {
		return ErrOutOfReach
	}
	return nil
}

// CheckSlack decides whether the conversation of thread from may read a
// Slack thread in channelID of workspace teamID ("": unknown), and returns
// the workspace to read it in ("" leaves the choice to the reader, for the
// operator). The workspace is teamID, else the one weft has threads in that
// channel in, else the asker's own Slack workspace; it must be of the
// asker's organisation, or ErrOutOfReach. A conversation on no platform is
// the operator's and reads any workspace.
func (r *Reach) CheckSlack(ctx context.Context, from uuid.UUID, teamID, channelID string) (string, error) {
	tenant, mine, err := r.Store.ThreadTenant(ctx, from)
	if err != nil || mine == "" {
		return teamID, err
	}
	if teamID == "" {
		teamID, err = r.Store.SlackChannelTeam(ctx, channelID)
		switch {
		case errors.Is(err, thread.ErrNotFound) && tenant.Kind == thread.TenantSlack:
			teamID = tenant.ID
		case errors.Is(err, thread.ErrNotFound):
			return "", ErrOutOfReach // no workspace of its organisation is known to have it
		case err != nil:
			return "", err
		}
	}
	theirs, err := r.Store.Organisation(ctx, thread.SlackTenant(teamID))
	if err != nil {
		return "", err
	}
	if theirs != mine {
		return "", ErrOutOfReach
	}
	return teamID, nil
}

// resolve finds the organisation of target: a stored thread's, or that of
// the server of a Discord thread weft does not track. found is false when
// there is neither.
func (r *Reach) resolve(ctx context.Context, target string) (org string, found bool, err error) {
	if parsed, perr := uuid.Parse(target); perr == nil {
		if _, err := r.Store.Thread(ctx, parsed); err != nil {
			return "", false, ignoreNotFound(err)
		}
		_, org, err := r.Store.ThreadTenant(ctx, parsed)
		return org, err == nil, err
	}
	if !thread.IsSnowflake(target) {
		return "", false, nil
	}
	th, err := r.Store.ThreadByDiscordThread(ctx, target)
	switch {
	case err == nil:
		_, org, err := r.Store.ThreadTenant(ctx, th.ID)
		return org, err == nil, err
	case !errors.Is(err, thread.ErrNotFound) || r.Guild == nil:
		return "", false, ignoreNotFound(err)
	}
	guildID, err := r.Guild(ctx, target)
	if err != nil {
		return "", false, ignoreNotFound(err)
	}
	if len(r.Guilds) > 0 && !slices.Contains(r.Guilds, guildID) {
		return "", true, nil // no organisation: out of reach of every tenant
	}
	if guildID == "" {
		return "", true, nil
	}
	org, err = r.Store.Organisation(ctx, thread.DiscordTenant(guildID))
	return org, err == nil, err
}

// ignoreNotFound lets a missing thread through to the reader, which
// answers it as not found.
func ignoreNotFound(err error) error {
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	return err
}
