// Package slackinstall keeps the Slack app's OAuth v2 installations, one
// per workspace: it seals their bot tokens (package secret) before they
// reach the database (package db), and Token hands a workspace's bot token
// out, rotating it first when the app has token rotation on and it is about
// to expire. It is the one place that sees both the database and Slack's
// OAuth, as package installation is for Linear.
package slackinstall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/thread"
)

// RefreshMargin is how long before expiry a rotating token is refreshed
// (Slack's expire after 12 hours).
const RefreshMargin = 10 * time.Minute

// Errors of Token for workspaces without a working installation; both are
// slack.ErrNotInstalled, so that the clients fall back to SLACK_BOT_TOKEN.
var (
	ErrNotInstalled = fmt.Errorf("slackinstall: %w", slack.ErrNotInstalled)
	ErrRevoked      = fmt.Errorf("slackinstall: the app was uninstalled from this workspace: %w", slack.ErrNotInstalled)
)

// Refresher trades a refresh token for a new pair; *slack.OAuth is one.
type Refresher interface {
	Refresh(ctx context.Context, refreshToken string) (*slack.Token, error)
}

// Tokens are the installations' bot tokens. Safe for concurrent use, across
// replicas too.
type Tokens struct {
	store  *db.Store
	cipher *secret.Cipher
	oauth  Refresher
	logger *slog.Logger
	now    func() time.Time
}

// New returns the token source over the installations in store.
func New(store *db.Store, cipher *secret.Cipher, oauth Refresher, logger *slog.Logger) *Tokens {
	return &Tokens{store: store, cipher: cipher, oauth: oauth, logger: logger.With("component", "slack_tokens"), now: time.Now}
}

// Save stores the installation an OAuth callback produced. A re-install
// replaces the tokens and reactivates a revoked installation.
func (t *Tokens) Save(ctx context.Context, in *slack.Install) error {
	bot, refresh, err := t.seal(in.TeamID, in.BotToken, in.RefreshToken)
	if err != nil {
		return err
	}
	err = t.store.SaveSlackInstallation(ctx, db.SlackInstallation{
		TeamID: in.TeamID, TeamName: in.TeamName, EnterpriseID: in.EnterpriseID, IsEnterpriseInstall: in.IsEnterpriseInstall,
		AppID: in.AppID, BotUserID: in.BotUserID, BotTokenEnc: bot, RefreshTokenEnc: refresh, ExpiresAt: in.ExpiresAt,
		Scopes: in.Scopes, InstalledBy: in.InstalledBy,
	})
	if err != nil {
		return fmt.Errorf("slackinstall: save: %w", err)
	}
	return nil
}

// Revoke deactivates a workspace's installation (app_uninstalled,
// tokens_revoked); its tokens are no longer handed out.
func (t *Tokens) Revoke(ctx context.Context, teamID string) error {
	_, err := t.store.DeactivateSlackInstallation(ctx, teamID)
	return err
}

// Token returns a live bot token for the workspace. A failed refresh falls
// back to the current token while that has not expired.
func (t *Tokens) Token(ctx context.Context, teamID string) (string, error) {
	in, err := t.store.SlackInstallation(ctx, teamID)
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return "", fmt.Errorf("%w: %s", ErrNotInstalled, teamID)
	case err != nil:
		return "", fmt.Errorf("slackinstall: %w", err)
	case !in.Active:
		return "", fmt.Errorf("%w: %s", ErrRevoked, teamID)
	case !t.due(in):
		return t.open(teamID, "bot", in.BotTokenEnc)
	}
	tok, err := t.refresh(ctx, teamID)
	if err != nil && !errors.Is(err, ErrRevoked) && t.now().Before(in.ExpiresAt) {
		t.logger.WarnContext(ctx, "slack token refresh failed, using the current token until it expires",
			slog.String("team_id", teamID), slog.Time("expires_at", in.ExpiresAt), slog.Any("error", err))
		return t.open(teamID, "bot", in.BotTokenEnc)
	}
	return tok, err
}

// refresh rotates the workspace's pair under the row lock: Slack's refresh
// tokens are single-use, so the second replica to take the lock finds the
// row fresh and uses the token the first stored.
func (t *Tokens) refresh(ctx context.Context, teamID string) (string, error) {
	var tok string
	err := t.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		in, err := tx.LockSlackInstallation(ctx, teamID)
		if err != nil {
			return err
		}
		if !in.Active {
			return fmt.Errorf("%w: %s", ErrRevoked, teamID)
		}
		if !t.due(in) {
			tok, err = t.open(teamID, "bot", in.BotTokenEnc)
			return err
		}
		rt, err := t.open(teamID, "refresh", in.RefreshTokenEnc)
		if err != nil {
			return err
		}
		next, err := t.oauth.Refresh(ctx, rt)
		if err != nil {
			return err
		}
		if next.RefreshToken == "" {
			next.RefreshToken = rt
		}
		bot, refresh, err := t.seal(teamID, next.BotToken, next.RefreshToken)
		if err != nil {
			return err
		}
		if err := tx.UpdateSlackTokens(ctx, teamID, bot, refresh, next.ExpiresAt); err != nil {
			return err
		}
		tok = next.BotToken
		t.logger.InfoContext(ctx, "slack token rotated", slog.String("team_id", teamID), slog.Time("expires_at", next.ExpiresAt))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("slackinstall: refresh %s: %w", teamID, err)
	}
	return tok, nil
}

// due reports whether a rotating token needs refreshing; a token without
// an expiry never does.
func (t *Tokens) due(in *db.SlackInstallation) bool {
	return !in.ExpiresAt.IsZero() && t.now().Add(RefreshMargin).After(in.ExpiresAt)
}

// seal encrypts the tokens, each bound to its workspace and column so a
// ciphertext moved elsewhere does not decrypt.
func (t *Tokens) seal(teamID, bot, refresh string) (botEnc, refreshEnc []byte, err error) {
	if botEnc, err = t.cipher.Seal([]byte(bot), associated(teamID, "bot")); err != nil {
		return nil, nil, err
	}
	if refresh != "" {
		if refreshEnc, err = t.cipher.Seal([]byte(refresh), associated(teamID, "refresh")); err != nil {
			return nil, nil, err
		}
	}
	return botEnc, refreshEnc, nil
}

func (t *Tokens) open(teamID, column string, sealed []byte) (string, error) {
	b, err := t.cipher.Open(sealed, associated(teamID, column))
	if err != nil {
		return "", fmt.Errorf("slackinstall: %s token of %s: %w", column, teamID, err)
	}
	return string(b), nil
}

func associated(teamID, column string) []byte {
	return []byte("slack_installations/" + teamID + "/" + column)
}
