package deploy

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/weft-dev/weft/internal/slack"
)

// TestSlackManifest checks the app manifest teams create weft's Slack app
// from: the bot scopes are the ones the OAuth install asks for, every bot
// event has the scope Slack requires for it, and the doors are weft's.
func TestSlackManifest(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("slack/manifest.yaml")
	require.NoError(t, err)
	var m struct {
		Features struct {
			AgentView *struct {
				Description string `yaml:"agent_description"`
			} `yaml:"agent_view"`
			AppHome struct {
				MessagesTab bool `yaml:"messages_tab_enabled"`
			} `yaml:"app_home"`
			SlashCommands []struct {
				Command string `yaml:"command"`
				URL     string `yaml:"url"`
			} `yaml:"slash_commands"`
		} `yaml:"features"`
		OAuth struct {
			RedirectURLs []string `yaml:"redirect_urls"`
			Scopes       struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				RequestURL string   `yaml:"request_url"`
				BotEvents  []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			SocketMode    *bool `yaml:"socket_mode_enabled"`
			Interactivity struct {
				Enabled    bool   `yaml:"is_enabled"`
				RequestURL string `yaml:"request_url"`
			} `yaml:"interactivity"`
		} `yaml:"settings"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &m))
	require.Equal(t, slack.BotScopes, m.OAuth.Scopes.Bot)
	needs := map[string]string{
		"app_mention": "app_mentions:read", "message.channels": "channels:history", "message.groups": "groups:history",
		"message.im": "im:history", "message.mpim": "mpim:history", "assistant_thread_started": "assistant:write",
		"app_uninstalled": "", "tokens_revoked": "", "app_home_opened": "", "app_context_changed": "",
		"assistant_thread_context_changed": "assistant:write",
	}
	for _, ev := range m.Settings.Events.BotEvents {
		scope, known := needs[ev]
		require.True(t, known, "unexpected event %s", ev)
		if scope != "" {
			require.True(t, slices.Contains(m.OAuth.Scopes.Bot, scope), "%s needs %s", ev, scope)
		}
	}
	require.Equal(t, "https://weft.example.com/webhooks/slack", m.Settings.Events.RequestURL)
	require.Equal(t, []string{"https://weft.example.com/oauth/slack/callback"}, m.OAuth.RedirectURLs)
	require.Len(t, m.Features.SlashCommands, 1)
	require.Equal(t, "/weft", m.Features.SlashCommands[0].Command)
	require.Equal(t, "https://weft.example.com/webhooks/slack/commands", m.Features.SlashCommands[0].URL)
	require.NotNil(t, m.Settings.SocketMode)
	// Buttons (feedback, approvals) need interactivity at weft's door, the
	// messages tab the agent view.
	require.True(t, m.Settings.Interactivity.Enabled)
	require.Equal(t, "https://weft.example.com/webhooks/slack/interactions", m.Settings.Interactivity.RequestURL)
	require.NotNil(t, m.Features.AgentView)
	require.NotEmpty(t, m.Features.AgentView.Description)
	require.True(t, m.Features.AppHome.MessagesTab)
	for _, ev := range []string{"app_home_opened", "app_context_changed", "assistant_thread_started"} {
		require.Contains(t, m.Settings.Events.BotEvents, ev)
	}
}
