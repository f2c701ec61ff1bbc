package installation

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/slack"
)

// SlackRefreshMargin is how long before expiry a rotating Slack token is
// refreshed (Slack's expire after 12 hours).
const SlackRefreshMargin = 10 * time.Minute

// Slack is the Slack app's installations' bot tokens. Token's errors for a
// workspace without one are also slack.ErrNotInstalled, so that the
// clients fall back to SLACK_BOT_TOKEN.
type Slack struct {
	*Tokens
}

// NewSlack returns the token source over the Slack installations in
// store; *slack.OAuth refreshes.
func NewSlack(store *db.Store, cipher *secret.Cipher, oauth Refresher[*slack.Token], logger *slog.Logger) *Slack {
	return &Slack{newTokens(Platform{
		Name: "slack", WorkspaceKey: "team_id", Margin: SlackRefreshMargin, Missing: slack.ErrNotInstalled,
		Table: tableOf("slack_installations", "bot", (*db.Queries).SlackInstallation, (*db.Queries).LockSlackInstallation,
			(*db.Queries).UpdateSlackTokens, func(in *db.SlackInstallation) Sealed {
				return Sealed{Token: in.BotTokenEnc, Refresh: in.RefreshTokenEnc, ExpiresAt: in.ExpiresAt, Active: in.Active}
			}),
		Refresh: refresher(oauth.Refresh, func(tok *slack.Token) Pair {
			return Pair{Token: tok.BotToken, Refresh: tok.RefreshToken, ExpiresAt: tok.ExpiresAt}
		}),
	}, store, cipher, logger)}
}

// Save stores the installation an OAuth callback produced. A re-install
// replaces the tokens and reactivates a revoked installation.
func (s *Slack) Save(ctx context.Context, in *slack.Install) error {
	bot, refresh, err := s.seal(in.TeamID, Pair{Token: in.BotToken, Refresh: in.RefreshToken})
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
func (s *Slack) Revoke(ctx context.Context, teamID string) error {
	_, err := s.store.DeactivateSlackInstallation(ctx, teamID)
	return err
}
