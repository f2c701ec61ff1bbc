package db

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// SlackInstallation is the app's OAuth v2 installation in one Slack
// workspace. The tokens are ciphertext, sealed and opened by the caller.
type SlackInstallation struct {
	TeamID              string
	TeamName            string
	EnterpriseID        string
	IsEnterpriseInstall bool
	AppID               string
	BotUserID           string
	BotTokenEnc         []byte
	RefreshTokenEnc     []byte    // nil unless the app rotates tokens
	ExpiresAt           time.Time // zero unless the app rotates tokens
	Scopes              []string
	InstalledBy         string // the Slack user who approved the install
	Active              bool
	InstalledAt         time.Time
	UpdatedAt           time.Time
	RevokedAt           time.Time // zero while active
}

func slackInstallationOf(r dbsqlc.SlackInstallation, err error) (*SlackInstallation, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &SlackInstallation{
		TeamID: r.TeamID, TeamName: r.TeamName, EnterpriseID: r.EnterpriseID, IsEnterpriseInstall: r.IsEnterpriseInstall,
		AppID: r.AppID, BotUserID: r.BotUserID, BotTokenEnc: r.BotTokenEnc, RefreshTokenEnc: r.RefreshTokenEnc,
		ExpiresAt: tm(r.ExpiresAt), Scopes: r.Scopes, InstalledBy: r.InstalledBy, Active: r.IsActive,
		InstalledAt: r.InstalledAt, UpdatedAt: r.UpdatedAt, RevokedAt: tm(r.RevokedAt),
	}, nil
}

// SaveSlackInstallation stores a workspace's installation: a new one, or a
// re-install, which replaces the tokens and makes it active again.
func (q *Queries) SaveSlackInstallation(ctx context.Context, in SlackInstallation) error {
	if in.TeamID == "" || in.AppID == "" || in.BotUserID == "" || len(in.BotTokenEnc) == 0 {
		return fmt.Errorf("save slack installation: %w: team, app, bot user and bot token are required", thread.ErrInvalid)
	}
	if (len(in.RefreshTokenEnc) == 0) != in.ExpiresAt.IsZero() {
		return fmt.Errorf("save slack installation: %w: a refresh token goes with an expiry", thread.ErrInvalid)
	}
	scopes := in.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	err := q.gen.SaveSlackInstallation(ctx, dbsqlc.SaveSlackInstallationParams{
		TeamID: in.TeamID, TeamName: in.TeamName, EnterpriseID: in.EnterpriseID, IsEnterpriseInstall: in.IsEnterpriseInstall,
		AppID: in.AppID, BotUserID: in.BotUserID, BotTokenEnc: in.BotTokenEnc, RefreshTokenEnc: in.RefreshTokenEnc,
		ExpiresAt: nullTime(in.ExpiresAt), Scopes: scopes, InstalledBy: in.InstalledBy,
	})
	if err != nil {
		return fmt.Errorf("save slack installation: %w", translate(err))
	}
	return nil
}

// SlackInstallation returns a workspace's installation, active or not, or
// thread.ErrNotFound.
func (q *Queries) SlackInstallation(ctx context.Context, teamID string) (*SlackInstallation, error) {
	in, err := slackInstallationOf(q.gen.SlackInstallation(ctx, teamID))
	if err != nil {
		return nil, fmt.Errorf("slack installation: %w", err)
	}
	return in, nil
}

// LockSlackInstallation returns a workspace's installation locked until the
// transaction ends: a refresh token is single-use, so refreshes must not
// race across replicas (see LockLinearInstallation).
func (q *Queries) LockSlackInstallation(ctx context.Context, teamID string) (*SlackInstallation, error) {
	in, err := slackInstallationOf(q.gen.LockSlackInstallation(ctx, teamID))
	if err != nil {
		return nil, fmt.Errorf("lock slack installation: %w", err)
	}
	return in, nil
}

// UpdateSlackTokens stores the token pair a refresh returned.
func (q *Queries) UpdateSlackTokens(ctx context.Context, teamID string, botEnc, refreshEnc []byte, expiresAt time.Time) error {
	n, err := q.gen.UpdateSlackTokens(ctx, dbsqlc.UpdateSlackTokensParams{
		TeamID: teamID, BotTokenEnc: botEnc, RefreshTokenEnc: refreshEnc, ExpiresAt: nullTime(expiresAt),
	})
	if err != nil {
		return fmt.Errorf("update slack tokens: %w", translate(err))
	}
	if n == 0 {
		return fmt.Errorf("update slack tokens: %w", thread.ErrNotFound)
	}
	return nil
}

// DeactivateSlackInstallation marks a workspace's installation revoked
// (app_uninstalled, tokens_revoked). It reports whether an active one was
// deactivated.
func (q *Queries) DeactivateSlackInstallation(ctx context.Context, teamID string) (bool, error) {
	n, err := q.gen.DeactivateSlackInstallation(ctx, teamID)
	if err != nil {
		return false, fmt.Errorf("deactivate slack installation: %w", translate(err))
	}
	return n == 1, nil
}
