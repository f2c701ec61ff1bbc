// Package installation keeps the Linear app's OAuth installations, one per
// workspace: it seals their tokens (package secret) before they reach the
// database (package db), and Tokens hands them to the Linear client,
// refreshing them before they expire. It is the one place that sees both
// the database and Linear's OAuth, so neither package depends on the other.
package installation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/thread"
)

// RefreshMargin is how long before expiry an access token is refreshed:
// enough that a token handed out is still good for the calls it is used on.
const RefreshMargin = 5 * time.Minute

// Errors of Tokens.Token for workspaces without a working installation.
var (
	ErrNotInstalled = errors.New("installation: the app is not installed in this workspace")
	ErrRevoked      = errors.New("installation: the app was uninstalled from this workspace")
)

// Refresher trades a refresh token for a new token pair;
// *linear.OAuthClient implements it.
type Refresher interface {
	Refresh(ctx context.Context, refreshToken string) (*linear.Token, error)
}

// Tokens is the linear.TokenSource of an OAuth app installed in many
// workspaces. It is safe for concurrent use, across replicas too.
type Tokens struct {
	store  *db.Store
	cipher *secret.Cipher
	oauth  Refresher
	logger *slog.Logger
	now    func() time.Time
}

var _ linear.TokenSource = (*Tokens)(nil)

// NewTokens returns a token source over the installations in store.
func NewTokens(store *db.Store, cipher *secret.Cipher, oauth Refresher, logger *slog.Logger) *Tokens {
	return &Tokens{store: store, cipher: cipher, oauth: oauth, logger: logger.With("component", "linear_tokens"), now: time.Now}
}

// Save stores the installation an OAuth callback produced: the token pair,
// and the app user and workspace the viewer query named. A re-install
// replaces the tokens and reactivates a revoked installation.
func (t *Tokens) Save(ctx context.Context, tok *linear.Token, v *linear.Viewer) error {
	org := v.OrganizationID
	access, refresh, err := t.seal(org, tok)
	if err != nil {
		return err
	}
	err = t.store.SaveLinearInstallation(ctx, db.LinearInstallation{
		OrganizationID: org, AppUserID: v.ID, AccessTokenEnc: access, RefreshTokenEnc: refresh,
		ExpiresAt: tok.ExpiresAt, Scopes: tok.Scopes,
	})
	if err != nil {
		return fmt.Errorf("installation: save: %w", err)
	}
	return nil
}

// Token returns a live access token for the workspace, refreshing it first
// when it is within RefreshMargin of expiring. A failed refresh falls back
// to the current token while that has not expired: the Linear client turns
// any token-source failure into an auth error, which the outbox would not
// retry, and a refresh failing for a few minutes should not cost posts.
func (t *Tokens) Token(ctx context.Context, organizationID string) (string, error) {
	in, err := t.store.LinearInstallation(ctx, organizationID)
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return "", fmt.Errorf("%w: %s", ErrNotInstalled, organizationID)
	case err != nil:
		return "", fmt.Errorf("installation: %w", err)
	case !in.Active:
		return "", fmt.Errorf("%w: %s", ErrRevoked, organizationID)
	case !t.due(in):
		return t.open(in.OrganizationID, "access", in.AccessTokenEnc)
	}
	tok, err := t.refresh(ctx, organizationID)
	if err != nil && !errors.Is(err, ErrRevoked) && t.now().Before(in.ExpiresAt) {
		t.logger.WarnContext(ctx, "token refresh failed, using the current token until it expires",
			slog.String("organization_id", organizationID), slog.Time("expires_at", in.ExpiresAt), slog.Any("error", err))
		return t.open(in.OrganizationID, "access", in.AccessTokenEnc)
	}
	return tok, err
}

// refresh refreshes the workspace's token pair under the installation's row
// lock. Linear rotates the refresh token on each use, so refreshes must be
// single-flight across replicas: the second to take the lock finds the row
// fresh and uses the token the first stored. Should the commit fail after
// Linear answered, Linear's 30-minute grace lets the old refresh token be
// replayed for the same new pair.
func (t *Tokens) refresh(ctx context.Context, org string) (string, error) {
	var tok string
	err := t.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		in, err := tx.LockLinearInstallation(ctx, org)
		if err != nil {
			return err
		}
		if !in.Active {
			return fmt.Errorf("%w: %s", ErrRevoked, org)
		}
		if !t.due(in) {
			tok, err = t.open(org, "access", in.AccessTokenEnc)
			return err
		}
		if len(in.RefreshTokenEnc) == 0 {
			return errors.New("installation: token expiring and no refresh token stored")
		}
		rt, err := t.open(org, "refresh", in.RefreshTokenEnc)
		if err != nil {
			return err
		}
		next, err := t.oauth.Refresh(ctx, rt)
		if err != nil {
			return err
		}
		if next.RefreshToken == "" {
			next.RefreshToken = rt // Linear always rotates it; keep the old one if not
		}
		access, refresh, err := t.seal(org, next)
		if err != nil {
			return err
		}
		if err := tx.UpdateLinearTokens(ctx, org, access, refresh, next.ExpiresAt); err != nil {
			return err
		}
		tok = next.AccessToken
		t.logger.InfoContext(ctx, "linear token refreshed", slog.String("organization_id", org), slog.Time("expires_at", next.ExpiresAt))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("installation: refresh %s: %w", org, err)
	}
	return tok, nil
}

// due reports whether the installation's access token needs refreshing.
func (t *Tokens) due(in *db.LinearInstallation) bool {
	return !in.ExpiresAt.IsZero() && t.now().Add(RefreshMargin).After(in.ExpiresAt)
}

// seal encrypts a token pair, each bound to its workspace and column so a
// ciphertext moved elsewhere does not decrypt.
func (t *Tokens) seal(org string, tok *linear.Token) (access, refresh []byte, err error) {
	if access, err = t.cipher.Seal([]byte(tok.AccessToken), associated(org, "access")); err != nil {
		return nil, nil, err
	}
	if tok.RefreshToken != "" {
		if refresh, err = t.cipher.Seal([]byte(tok.RefreshToken), associated(org, "refresh")); err != nil {
			return nil, nil, err
		}
	}
	return access, refresh, nil
}

func (t *Tokens) open(org, column string, sealed []byte) (string, error) {
	b, err := t.cipher.Open(sealed, associated(org, column))
	if err != nil {
		return "", fmt.Errorf("installation: %s token of %s: %w", column, org, err)
	}
	return string(b), nil
}

func associated(org, column string) []byte {
	return []byte("linear_installations/" + org + "/" + column)
}
