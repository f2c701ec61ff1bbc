package github

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	// golang-jwt rather than bradleyfalzon/ghinstallation: ghinstallation
	// pins an older go-github major (and jwt/v4), which would put two
	// go-github copies in the binary, and its transport hides the token
	// mint's failures from the error classification every call here
	// shares. Minting is thirty lines on top of go-github's own
	// Apps.CreateInstallationToken.
	"github.com/golang-jwt/jwt/v5"
	gh "github.com/google/go-github/v93/github"
)

const (
	// jwtBackdate is how far an app JWT's iat is set in the past, as
	// GitHub advises, to allow for clock drift.
	jwtBackdate = 60 * time.Second
	// jwtLifetime is an app JWT's lifetime from now; GitHub refuses more
	// than ten minutes.
	jwtLifetime = 9 * time.Minute
	// tokenRefreshMargin is how long before its expiry (an hour after
	// minting) an installation token is replaced, so that no call starts
	// with a token about to lapse mid-flight.
	tokenRefreshMargin = 5 * time.Minute
)

// tokenError marks a failure to get a token, so that errors tell "we had
// no token" from a failure of the call itself.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "get token: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// appJWT is a fresh RS256 app JWT: GitHub's authentication as the app,
// good only for app endpoints such as minting installation tokens.
func (c *Client) appJWT() (string, error) {
	now := c.now()
	claims := jwt.RegisteredClaims{
		IssuedAt:  jwt.NewNumericDate(now.Add(-jwtBackdate)),
		ExpiresAt: jwt.NewNumericDate(now.Add(jwtLifetime)),
		Issuer:    strconv.FormatInt(c.appID, 10),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(c.key)
	if err != nil {
		return "", fmt.Errorf("sign app jwt: %w", err)
	}
	return s, nil
}

// installationToken is in's access token, minted when there is none or it
// expires within tokenRefreshMargin. Concurrent callers wait for one mint.
func (c *Client) installationToken(ctx context.Context, in *installation) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.token != "" && c.now().Add(tokenRefreshMargin).Before(in.expires) {
		return in.token, nil
	}
	// An empty object, not go-github's null for no options: the REST
	// description's body is an object, not nullable.
	tok, _, err := c.app.Apps.CreateInstallationToken(ctx, in.id, &gh.InstallationTokenOptions{})
	if err != nil {
		return "", translate(ctx, "create_installation_token", err)
	}
	in.token, in.expires = tok.GetToken(), tok.GetExpiresAt().Time
	c.logger.DebugContext(ctx, "github_installation_token_minted",
		slog.Int64("installation_id", in.id), slog.Time("expires_at", in.expires))
	return in.token, nil
}

// forget drops tok if it is still in's token, so the next call mints one.
func (in *installation) forget(tok string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.token == tok {
		in.token = ""
	}
}

// InstallationToken is installation id's current access token, minted if
// needed: for git over HTTPS, or a tool that calls GitHub itself.
func (c *Client) InstallationToken(ctx context.Context, id int64) (string, error) {
	in, err := c.inst(id)
	if err != nil {
		return "", err
	}
	return c.installationToken(ctx, in)
}
