package slack

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/secret"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface/installation"
)

// RefreshMargin is how long before expiry a rotating Slack token is
// refreshed (Slack's expire after 12 hours).
const RefreshMargin = 10 * time.Minute

// Installations is the Slack app's installations' bot tokens. Token's errors for a
// workspace without one are also slackapi.ErrNotInstalled, so that the
// clients fall back to SLACK_BOT_TOKEN.
type Installations struct {
	*installation.Tokens
	store *db.Store
}

// NewInstallations returns the token source over the Slack installations in
// store; *slackapi.OAuth refreshes.
func NewInstallations(store *db.Store, cipher *secret.Cipher, oauth installation.Refresher[*slackapi.Token], logger *slog.Logger) *Installations {
	return &Installations{Tokens: installation.NewTokens(installation.Platform{
		Name: "slack", WorkspaceKey: "team_id", Margin: RefreshMargin, Missing: slackapi.ErrNotInstalled,
		Table: installation.TableOf("slack_installations", "bot", (*db.Queries).SlackInstallation, (*db.Queries).LockSlackInstallation,
			(*db.Queries).UpdateSlackTokens, func(in *db.SlackInstallation) installation.Sealed {
				return installation.Sealed{Token: in.BotTokenEnc, Refresh: in.RefreshTokenEnc, ExpiresAt: in.ExpiresAt, Active: in.Active}
			}),
		Refresh: installation.RefreshWith(oauth.Refresh, func(tok *slackapi.Token) installation.Pair {
			return installation.Pair{Token: tok.BotToken, Refresh: tok.RefreshToken, ExpiresAt: tok.ExpiresAt}
		}),
	}, store, cipher, logger), store: store}
}

// Save stores the installation an OAuth callback produced. A re-install
// replaces the tokens and reactivates a revoked installation.
func (s *Installations) Save(ctx context.Context, in *slackapi.Install) error {
	bot, refresh, err := s.Seal(in.TeamID, installation.Pair{Token: in.BotToken, Refresh: in.RefreshToken})
	if err != nil {
		return err
	}
	err = s.store.SaveSlackInstallation(ctx, db.SlackInstallation{
		TeamID: in.TeamID, TeamName: in.TeamName, EnterpriseID: in.EnterpriseID, IsEnterpriseInstall: in.IsEnterpriseInstall,
		AppID: in.AppID, BotUserID: in.BotUserID, BotTokenEnc: bot, RefreshTokenEnc: refresh, ExpiresAt: in.ExpiresAt,
		Scopes: in.Scopes, InstalledBy: in.InstalledBy,
	})
	if err != nil {
		return fmt.Errorf("installation: save slack: %w", err)
	}
	return nil
}

// Revoke deactivates a workspace's installation (app_uninstalled,
// tokens_revoked); its tokens are no longer handed out.
func (s *Installations) Revoke(ctx context.Context, teamID string) error {
	_, err := s.store.DeactivateSlackInstallation(ctx, teamID)
	return err
}
