package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	goslack "github.com/slack-go/slack"
)

// BotScopes are the bot token scopes weft asks for: the same list as
// deploy/slack/manifest.yaml (a test keeps the two equal).
var BotScopes = []string{
	"app_mentions:read", "assistant:write", "channels:history", "channels:read", "chat:write", "commands",
	"files:read", "groups:history", "groups:read", "im:history", "im:read", "mpim:history", "users:read",
}

// authorizeURL is Slack's OAuth v2 consent page.
const authorizeURL = "https://slack.com/oauth/v2/authorize"

// AuthorizeURL is where an admin approves the app for a workspace.
func AuthorizeURL(clientID, redirectURI, state string) string {
	q := url.Values{"client_id": {clientID}, "scope": {strings.Join(BotScopes, ",")}, "redirect_uri": {redirectURI}, "state": {state}}
	return authorizeURL + "?" + q.Encode()
}

// Install is what oauth.v2.access returned for a workspace.
type Install struct {
	TeamID, TeamName    string
	EnterpriseID        string
	IsEnterpriseInstall bool
	AppID, BotUserID    string
	BotToken            string
	// RefreshToken and ExpiresAt are set when the app rotates tokens.
	RefreshToken string
	ExpiresAt    time.Time
	Scopes       []string
	InstalledBy  string
}

// OAuth is the app's OAuth v2 client.
type OAuth struct {
	ClientID, ClientSecret, RedirectURI string
	// APIURL replaces https://slack.com/api/ (a fake's APIURL).
	APIURL     string
	HTTPClient *http.Client
	now        func() time.Time
}

func (o *OAuth) opts() []goslack.OAuthOption {
	if o.APIURL == "" {
		return nil
	}
	u := o.APIURL
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return []goslack.OAuthOption{goslack.OAuthOptionAPIURL(u)}
}

func (o *OAuth) client() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return &http.Client{Timeout: defaultHTTPTimeout}
}

func (o *OAuth) clock() time.Time {
	if o.now != nil {
		return o.now()
	}
	return time.Now()
}

// Exchange trades an authorization code for the workspace's bot token.
func (o *OAuth) Exchange(ctx context.Context, code string) (*Install, error) {
	r, err := goslack.GetOAuthV2ResponseContext(ctx, o.client(), o.ClientID, o.ClientSecret, code, o.RedirectURI, o.opts()...)
	if err != nil {
		return nil, translate("oauth.v2.access", err)
	}
	if r.TokenType != "" && r.TokenType != "bot" || !strings.HasPrefix(r.AccessToken, "xoxb-") && !strings.HasPrefix(r.AccessToken, "xoxe.xoxb-") {
		return nil, fmt.Errorf("slack: oauth.v2.access returned no bot token (token_type %q)", r.TokenType)
	}
	in := &Install{
		TeamID: r.Team.ID, TeamName: r.Team.Name, EnterpriseID: r.Enterprise.ID, IsEnterpriseInstall: r.IsEnterpriseInstall,
		AppID: r.AppID, BotUserID: r.BotUserID, BotToken: r.AccessToken, RefreshToken: r.RefreshToken,
		InstalledBy: r.AuthedUser.ID,
	}
	if r.Scope != "" {
		in.Scopes = strings.Split(r.Scope, ",")
	}
	if r.RefreshToken != "" && r.ExpiresIn > 0 {
		in.ExpiresAt = o.clock().Add(time.Duration(r.ExpiresIn) * time.Second)
	}
	if in.IsEnterpriseInstall && in.TeamID == "" {
		in.TeamID = in.EnterpriseID // an org-wide install is keyed by its enterprise
	}
	return in, nil
}

// Token is a rotated token pair.
type Token struct {
	BotToken, RefreshToken string
	ExpiresAt              time.Time
}

// Refresh trades a (single-use) refresh token for a new pair.
func (o *OAuth) Refresh(ctx context.Context, refreshToken string) (*Token, error) {
	r, err := goslack.RefreshOAuthV2TokenContext(ctx, o.client(), o.ClientID, o.ClientSecret, refreshToken, o.opts()...)
	if err != nil {
		return nil, translate("oauth.v2.access", err)
	}
	if r.AccessToken == "" || r.ExpiresIn <= 0 {
		return nil, errors.New("slack: token refresh returned no expiring token")
	}
	return &Token{BotToken: r.AccessToken, RefreshToken: r.RefreshToken,
		ExpiresAt: o.clock().Add(time.Duration(r.ExpiresIn) * time.Second)}, nil
}
