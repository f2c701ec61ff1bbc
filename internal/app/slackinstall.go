package app

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/secret"
	"github.com/weft-dev/weft/internal/slack"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
)

// SlackInstallConfig is the Slack app's OAuth v2 install and the
// workspaces it may serve.
type SlackInstallConfig struct {
	ClientID, ClientSecret, RedirectURI string
	APIURL                              string // SLACK_API_URL: a fake's
	EncryptionKey                       string
	// AllowedTeams is SLACK_ALLOWED_TEAMS: when set, only these workspaces
	// may install weft or reach it; anything else is refused.
	AllowedTeams []string
}

func loadSlackInstall(getenv func(string) string) SlackInstallConfig {
	return SlackInstallConfig{
		ClientID: getenv("SLACK_CLIENT_ID"), ClientSecret: getenv("SLACK_CLIENT_SECRET"),
		RedirectURI: getenv("SLACK_REDIRECT_URI"), APIURL: getenv("SLACK_API_URL"),
		EncryptionKey: getenv("WEFT_ENCRYPTION_KEY"), AllowedTeams: splitList(getenv("SLACK_ALLOWED_TEAMS")),
	}
}

// splitList reads a comma-separated list, blanks dropped.
func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// TeamAllowed says whether a Slack workspace may reach weft: any when
// SLACK_ALLOWED_TEAMS is unset, else only those listed (fail closed).
func (c SlackInstallConfig) TeamAllowed(teamID string) bool {
	return len(c.AllowedTeams) == 0 || slices.Contains(c.AllowedTeams, teamID)
}

// newSlackOAuth builds the install flow and the installations' tokens;
// both nil without SLACK_CLIENT_ID.
func newSlackOAuth(c SlackInstallConfig, store *db.Store, logger *slog.Logger) (*surfaceslack.OAuth, *surfaceslack.Installations, error) {
	if c.ClientID == "" {
		return nil, nil, nil
	}
	if c.ClientSecret == "" || c.RedirectURI == "" {
		return nil, nil, fmt.Errorf("SLACK_CLIENT_ID needs SLACK_CLIENT_SECRET and SLACK_REDIRECT_URI")
	}
	key, err := secret.ParseKey(c.EncryptionKey)
	if err != nil {
		return nil, nil, fmt.Errorf("WEFT_ENCRYPTION_KEY (for SLACK_CLIENT_ID): %w", err)
	}
	cipher, err := secret.NewCipher(key)
	if err != nil {
		return nil, nil, err
	}
	oauth := &slack.OAuth{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURI: c.RedirectURI, APIURL: c.APIURL}
	tokens := surfaceslack.NewInstallations(store, cipher, oauth, logger)
	return &surfaceslack.OAuth{ClientID: c.ClientID, RedirectURI: c.RedirectURI, StateSecret: []byte(c.ClientSecret),
		Codes: oauth, Installations: tokens, Allowed: c.TeamAllowed}, tokens, nil
}
