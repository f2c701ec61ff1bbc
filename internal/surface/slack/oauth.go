package slack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface/oauth"
)

// OAuth is the Slack app's OAuth v2 install flow.
type OAuth struct {
	ClientID string
	// RedirectURI is this server's /oauth/slack/callback as the app's
	// settings list it (HTTPS); Codes must use the same.
	RedirectURI string
	// StateSecret signs the state parameter (the client secret).
	StateSecret []byte
	// Codes exchanges the callback's code; *slackapi.OAuth.
	Codes interface {
		Exchange(ctx context.Context, code string) (*slackapi.Install, error)
	}
	// Installations stores the result; *Installations.
	Installations interface {
		Save(ctx context.Context, in *slackapi.Install) error
	}
	// Allowed says whether a workspace may install (SLACK_ALLOWED_TEAMS);
	// nil allows any.
	Allowed func(teamID string) bool
}

// slackFlow installs the Slack app with the manifest's bot scopes and
// stores the workspace's bot token sealed, for a workspace Allowed admits.
func slackFlow(logger *slog.Logger, o *OAuth) *oauth.Flow[*slackapi.Install] {
	return &oauth.Flow[*slackapi.Install]{
		Name: "slack", Title: "Slack", RedirectURI: o.RedirectURI, StateSecret: o.StateSecret, Logger: logger,
		AuthorizeURL: func(state string) string { return slackapi.AuthorizeURL(o.ClientID, o.RedirectURI, state) },
		Exchange:     o.Codes.Exchange,
		Save: func(ctx context.Context, in *slackapi.Install) (oauth.Installed, error) {
			if o.Allowed != nil && !o.Allowed(in.TeamID) {
				return oauth.Installed{}, &oauth.Answer{Status: http.StatusForbidden, Message: "this Slack workspace may not install weft",
					Err: fmt.Errorf("team %s not in SLACK_ALLOWED_TEAMS", in.TeamID)}
			}
			if err := o.Installations.Save(ctx, in); err != nil {
				return oauth.Installed{}, err
			}
			return oauth.Installed{Workspace: in.TeamName,
				Log: []any{slog.String("team_id", in.TeamID), slog.Bool("rotating", in.RefreshToken != "")}}, nil
		},
	}
}
