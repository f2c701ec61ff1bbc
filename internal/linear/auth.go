package linear

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// TokenSource returns the access token for a Linear workspace. weft keeps
// one OAuth installation per workspace; the implementation (outside this
// package) looks it up, refreshing it when needed.
type TokenSource interface {
	Token(ctx context.Context, organizationID string) (string, error)
}

// StaticToken is a TokenSource with one token for every workspace: the
// LINEAR_ACCESS_TOKEN single-workspace mode.
type StaticToken string

// Token returns the token, whatever the workspace.
func (t StaticToken) Token(context.Context, string) (string, error) {
	if t == "" {
		return "", errors.New("linear: empty static token")
	}
	return string(t), nil
}

type organizationKey struct{}

// WithOrganization returns a context whose Client calls authenticate as the
// app installation in the given workspace (a webhook's organizationId).
func WithOrganization(ctx context.Context, organizationID string) context.Context {
	return context.WithValue(ctx, organizationKey{}, organizationID)
}

func organizationFrom(ctx context.Context) string {
	id, _ := ctx.Value(organizationKey{}).(string)
	return id
}

// authTransport adds the Authorization header for the request's workspace.
type authTransport struct {
	base   http.RoundTripper
	tokens TokenSource
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.tokens.Token(req.Context(), organizationFrom(req.Context()))
	if err != nil {
		// RoundTrip must close the body even when it fails.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &tokenError{err: err}
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", authorization(tok))
	return t.base.RoundTrip(r)
}

// authorization formats the header: OAuth tokens are bearer tokens, while
// Linear's personal API keys (lin_api_…) are sent bare.
func authorization(tok string) string {
	if strings.HasPrefix(tok, "lin_api_") {
		return tok
	}
	return "Bearer " + tok
}
