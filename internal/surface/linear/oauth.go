package linear

import (
	"context"
	"log/slog"
	"net/http"

	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/surface/oauth"
)

// linearFlow installs the Linear app as an agent (actor=app, AgentScopes)
// and stores the installation, after asking Linear which app user and
// workspace the new token belongs to.
func linearFlow(logger *slog.Logger, o *OAuth) *oauth.Flow[*linearapi.Token] {
	return &oauth.Flow[*linearapi.Token]{
		Name: "linear", Title: "Linear", RedirectURI: o.RedirectURI, StateSecret: o.StateSecret, Logger: logger,
		AuthorizeURL: func(state string) string { return linearapi.AuthorizeURL(o.ClientID, o.RedirectURI, state, nil) },
		Exchange:     o.Codes.ExchangeCode,
		Save: func(ctx context.Context, tok *linearapi.Token) (oauth.Installed, error) {
			v, err := linearapi.NewClient(linearapi.ClientDeps{Endpoint: o.Endpoint, HTTPClient: o.HTTPClient, Tokens: linearapi.StaticToken(tok.AccessToken)}).Viewer(ctx)
			if err != nil {
				return oauth.Installed{}, &oauth.Answer{Status: http.StatusBadGateway, Message: "could not reach Linear; try again", Err: err}
			}
			if err := o.Installations.Save(ctx, tok, v); err != nil {
				return oauth.Installed{}, err
			}
			return oauth.Installed{Workspace: v.OrganizationName,
				Log: []any{slog.String("organization_id", v.OrganizationID), slog.String("app_user_id", v.ID)}}, nil
		},
	}
}
