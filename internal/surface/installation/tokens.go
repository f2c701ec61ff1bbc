// Package installation keeps every platform's OAuth installations, one per
// workspace, in one shape: it seals their tokens with WEFT_ENCRYPTION_KEY
// (package secret) before they reach the database (package db), and Tokens
// hands a workspace's token out, refreshing it first, under the row's lock,
// when it is about to expire. It is the one place that sees both the
// database and a platform's OAuth, so neither depends on the other.
//
// Each platform keeps its own table: their columns differ, and a sealed
// token is bound to its table's name, so one table would mean re-sealing every token.
// A platform gives its Table and its refresh (NewTokens) from its seam
// folder, which also saves and revokes its installations.
package installation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/thread"
)

// Errors of Tokens.Token for workspaces without a working installation.
var (
	ErrNotInstalled = errors.New("installation: the app is not installed in this workspace")
	ErrRevoked      = errors.New("installation: the app was uninstalled from this workspace")
)

// Sealed is one installation's tokens as its table holds them.
type Sealed struct {
	Token, Refresh []byte
	// ExpiresAt is when Token expires; zero for a token that does not.
	ExpiresAt time.Time
	Active    bool
}

// Pair is a token pair in the clear.
type Pair struct {
	Token, Refresh string
	ExpiresAt      time.Time
}

// Table is one platform's installations table.
type Table struct {
	// Name is the table's name, which a sealed token is bound to with its
	// workspace and column; TokenColumn names the token's column in that
	// binding ("access", "bot"), the refresh token's being "refresh".
	Name, TokenColumn string
	// Get reads a workspace's installation, or thread.ErrNotFound; Lock
	// reads it locked until the transaction q is in ends; Update stores a
	// refreshed pair.
	Get, Lock func(ctx context.Context, q *db.Queries, workspace string) (Sealed, error)
	Update    func(ctx context.Context, q *db.Queries, workspace string, token, refresh []byte, expiresAt time.Time) error
}

// TableOf is the Table over a platform's queries of rows R, which sealed
// reads the tokens of.
func TableOf[R any](name, tokenColumn string, get, lock func(*db.Queries, context.Context, string) (*R, error),
	update func(*db.Queries, context.Context, string, []byte, []byte, time.Time) error, sealed func(*R) Sealed) Table {
	read := func(f func(*db.Queries, context.Context, string) (*R, error)) func(context.Context, *db.Queries, string) (Sealed, error) {
		return func(ctx context.Context, q *db.Queries, workspace string) (Sealed, error) {
			r, err := f(q, ctx, workspace)
			if err != nil {
				return Sealed{}, err
			}
			return sealed(r), nil
		}
	}
	return Table{Name: name, TokenColumn: tokenColumn, Get: read(get), Lock: read(lock),
		Update: func(ctx context.Context, q *db.Queries, workspace string, token, refresh []byte, expiresAt time.Time) error {
			return update(q, ctx, workspace, token, refresh, expiresAt)
		}}
}

// RefreshWith is Platform.Refresh over a platform's refresh call, whose
// token pair pair reads.
func RefreshWith[T any](refresh func(context.Context, string) (T, error), pair func(T) Pair) func(context.Context, string) (Pair, error) {
	return func(ctx context.Context, refreshToken string) (Pair, error) {
		tok, err := refresh(ctx, refreshToken)
		if err != nil {
			return Pair{}, err
		}
		return pair(tok), nil
	}
}

// Refresher trades a refresh token for a platform's new token pair T.
type Refresher[T any] interface {
	Refresh(ctx context.Context, refreshToken string) (T, error)
}

// Platform is what Tokens needs of a platform.
type Platform struct {
	// Name names the platform in logs (its thread.Platform); WorkspaceKey
	// is the log attribute a workspace's id goes under ("organization_id").
	Name, WorkspaceKey string
	Table              Table
	// Refresh trades a refresh token for a new pair.
	Refresh func(ctx context.Context, refreshToken string) (Pair, error)
	// Margin is how long before expiry a token is refreshed: enough that
	// a token handed out is still good for the calls it is used on.
	Margin time.Duration
	// Missing, when set, is wrapped with ErrNotInstalled and ErrRevoked,
	// so that the platform's client can tell them (and fall back).
	Missing error
}

// Tokens hands out a platform's installation tokens. It is safe for
// concurrent use, across replicas too.
type Tokens struct {
	p      Platform
	store  *db.Store
	cipher *secret.Cipher
	logger *slog.Logger
	now    func() time.Time
}

// NewTokens returns the tokens of platform p's installations in store,
// sealed with cipher.
func NewTokens(p Platform, store *db.Store, cipher *secret.Cipher, logger *slog.Logger) *Tokens {
	return &Tokens{p: p, store: store, cipher: cipher, logger: logger.With("component", p.Name+"_tokens"), now: time.Now}
}

// missing is err for a workspace, wrapping the platform's own error too.
func (t *Tokens) missing(err error, workspace string) error {
	if t.p.Missing != nil {
		return fmt.Errorf("%w: %w: %s", err, t.p.Missing, workspace)
	}
	return fmt.Errorf("%w: %s", err, workspace)
}

// Token returns a live token for the workspace, refreshing it first when
// it is within the margin of expiring. A failed refresh falls back to the
// current token while that has not expired: a client turns a token
// failure into an auth error, which the outbox would not retry, and a
// refresh failing for a few minutes should not cost posts.
func (t *Tokens) Token(ctx context.Context, workspace string) (string, error) {
	in, err := t.p.Table.Get(ctx, &t.store.Queries, workspace)
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return "", t.missing(ErrNotInstalled, workspace)
	case err != nil:
		return "", fmt.Errorf("installation: %w", err)
	case !in.Active:
		return "", t.missing(ErrRevoked, workspace)
	case !t.due(in):
		return t.open(workspace, t.p.Table.TokenColumn, in.Token)
	}
	tok, err := t.refresh(ctx, workspace)
	if err != nil && !errors.Is(err, ErrRevoked) && t.now().Before(in.ExpiresAt) {
		t.logger.WarnContext(ctx, t.p.Name+" token refresh failed, using the current token until it expires",
			slog.String(t.p.WorkspaceKey, workspace), slog.Time("expires_at", in.ExpiresAt), slog.Any("error", err))
		return t.open(workspace, t.p.Table.TokenColumn, in.Token)
	}
	return tok, err
}

// refresh refreshes the workspace's pair under the installation's row
// lock. The platforms rotate the refresh token on each use, so
// refreshes must be single-flight across replicas: the second to take the
// lock finds the row fresh and uses the token the first stored.
func (t *Tokens) refresh(ctx context.Context, workspace string) (string, error) {
	var tok string
	err := t.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		in, err := t.p.Table.Lock(ctx, &tx.Queries, workspace)
		if err != nil {
			return err
		}
		if !in.Active {
			return t.missing(ErrRevoked, workspace)
		}
		if !t.due(in) {
			tok, err = t.open(workspace, t.p.Table.TokenColumn, in.Token)
			return err
		}
		if len(in.Refresh) == 0 {
			return errors.New("installation: token expiring and no refresh token stored")
		}
		rt, err := t.open(workspace, "refresh", in.Refresh)
		if err != nil {
			return err
		}
		next, err := t.p.Refresh(ctx, rt)
		if err != nil {
			return err
		}
		if next.Refresh == "" {
			next.Refresh = rt // both platforms rotate it; keep the old one if not
		}
		token, refresh, err := t.Seal(workspace, next)
		if err != nil {
			return err
		}
		if err := t.p.Table.Update(ctx, &tx.Queries, workspace, token, refresh, next.ExpiresAt); err != nil {
			return err
		}
		tok = next.Token
		t.logger.InfoContext(ctx, t.p.Name+" token refreshed", slog.String(t.p.WorkspaceKey, workspace), slog.Time("expires_at", next.ExpiresAt))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("installation: refresh %s %s: %w", t.p.Name, workspace, err)
	}
	return tok, nil
}

// due reports whether the installation's token needs refreshing; a token
// without an expiry never does.
func (t *Tokens) due(in Sealed) bool {
	return !in.ExpiresAt.IsZero() && t.now().Add(t.p.Margin).After(in.ExpiresAt)
}

// Seal encrypts a token pair, each bound to its table, workspace and
// column so that a ciphertext moved elsewhere does not decrypt.
func (t *Tokens) Seal(workspace string, p Pair) (token, refresh []byte, err error) {
	if token, err = t.cipher.Seal([]byte(p.Token), t.associated(workspace, t.p.Table.TokenColumn)); err != nil {
		return nil, nil, err
	}
	if p.Refresh != "" {
		if refresh, err = t.cipher.Seal([]byte(p.Refresh), t.associated(workspace, "refresh")); err != nil {
			return nil, nil, err
		}
	}
	return token, refresh, nil
}

func (t *Tokens) open(workspace, column string, sealed []byte) (string, error) {
	b, err := t.cipher.Open(sealed, t.associated(workspace, column))
	if err != nil {
		return "", fmt.Errorf("installation: %s %s token of %s: %w", t.p.Name, column, workspace, err)
	}
	return string(b), nil
}

func (t *Tokens) associated(workspace, column string) []byte {
	return []byte(t.p.Table.Name + "/" + workspace + "/" + column)
}
