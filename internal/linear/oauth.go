package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/surface"
)

// Linear's OAuth endpoints.
const (
	DefaultAuthorizeURL = "https://linear.app/oauth/authorize"
	DefaultTokenURL     = "https://api.linear.app/oauth/token"
)

// AgentScopes are the scopes an agent installation asks for: read and write,
// plus being delegated issues and being @-mentioned.
func AgentScopes() []string {
	return []string{"read", "write", "app:assignable", "app:mentionable"}
}

// AuthorizeURL is where to send a workspace admin to install the app as an
// agent: actor=app installs it as its own user rather than acting as the
// admin. nil scopes means AgentScopes. state should come from oauth.SignState.
func AuthorizeURL(clientID, redirectURI, state string, scopes []string) string {
	if scopes == nil {
		scopes = AgentScopes()
	}
	q := url.Values{
		"client_id":     {clientID},
		"redirect_uri":  {redirectURI},
		"response_type": {"code"},
		"scope":         {strings.Join(scopes, ",")},
		"state":         {state},
		"actor":         {"app"},
	}
	return DefaultAuthorizeURL + "?" + q.Encode()
}

// Token is an OAuth token pair for one workspace installation.
type Token struct {
	AccessToken string
	// RefreshToken replaces the previous one: Linear rotates it on every
	// refresh, so the caller must store the new one.
	RefreshToken string
	ExpiresAt    time.Time
	Scopes       []string
}

// OAuthClient exchanges authorization codes and refresh tokens at Linear's
// token endpoint.
type OAuthClient struct {
	clientID, clientSecret, redirectURI string
	tokenURL                            string
	hc                                  *http.Client
}

// NewOAuthClient returns a client for the app's credentials. tokenURL is
// DefaultTokenURL in production; httpClient may be nil.
func NewOAuthClient(clientID, clientSecret, redirectURI, tokenURL string, httpClient *http.Client) *OAuthClient {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: defaultHTTPTimeout}
	}
	return &OAuthClient{clientID: clientID, clientSecret: clientSecret, redirectURI: redirectURI, tokenURL: tokenURL, hc: httpClient}
}

// ExchangeCode trades the code from the OAuth callback for tokens.
func (o *OAuthClient) ExchangeCode(ctx context.Context, code string) (*Token, error) {
	return o.token(ctx, "exchange code", url.Values{
		"grant_type":   {"authorization_code"},
		"code":         {code},
		"redirect_uri": {o.redirectURI},
	})
}

// Refresh trades a refresh token for a new access token and a new refresh
// token. Linear lets the same refresh token be replayed for 30 minutes, but
// concurrent refreshes of one installation should still be single-flight.
func (o *OAuthClient) Refresh(ctx context.Context, refreshToken string) (*Token, error) {
	return o.token(ctx, "refresh token", url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refreshToken},
	})
}

// maxTokenResponse caps what is read from the token endpoint.
const maxTokenResponse = 1 << 20

func (o *OAuthClient) token(ctx context.Context, op string, form url.Values) (*Token, error) {
	form.Set("client_id", o.clientID)
	form.Set("client_secret", o.clientSecret)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &surface.Error{Platform: platform, Kind: surface.KindInvalid, Op: op, Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	now := time.Now()
	resp, err := o.hc.Do(req)
	if err != nil {
		return nil, checkResponse(ctx, op, err, nil, now)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return nil, checkResponse(ctx, op, err, nil, now)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, tokenEndpointError(op, resp, body, now)
	}
	var tr struct {
		AccessToken  string          `json:"access_token"`
		RefreshToken string          `json:"refresh_token"`
		ExpiresIn    int64           `json:"expires_in"`
		Scope        json.RawMessage `json:"scope"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, &surface.Error{Platform: platform, Kind: surface.KindServer, Op: op, Err: fmt.Errorf("unreadable token response: %w", err)}
	}
	if tr.AccessToken == "" {
		return nil, &surface.Error{Platform: platform, Kind: surface.KindServer, Op: op, Err: errors.New("token response without access_token")}
	}
	t := &Token{AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken, Scopes: parseScopes(tr.Scope)}
	if tr.ExpiresIn > 0 {
		t.ExpiresAt = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	return t, nil
}

// tokenEndpointError maps an OAuth error answer (RFC 6749 §5.2): a refused
// grant or client means re-authorizing, not retrying.
func tokenEndpointError(op string, resp *http.Response, body []byte, now time.Time) error {
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &oe)
	e := &surface.Error{Platform: platform, Op: op, Kind: kindOfStatus(resp.StatusCode), Err: fmt.Errorf("token endpoint answered %d: %s %s", resp.StatusCode, oe.Error, oe.Description)}
	switch oe.Error {
	case "invalid_grant", "invalid_client", "unauthorized_client":
		e.Kind = surface.KindAuth
	}
	if e.Kind == surface.KindRateLimited {
		e.RetryAfter = rateLimitWait(resp.Header, now)
	}
	return e
}

// parseScopes reads Linear's scope field: a space- or comma-separated
// string, or an array for apps created before December 2023.
func parseScopes(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}
