package app

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSlackInstallConfig: SLACK_ALLOWED_TEAMS fails closed when set, and
// the OAuth install refuses to start half-configured.
func TestSlackInstallConfig(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	open := loadSlackInstall(env())
	require.True(t, open.TeamAllowed("T1"), "unset: any workspace")
	closed := loadSlackInstall(env("SLACK_ALLOWED_TEAMS", " T1, ,T2 "))
	require.Equal(t, []string{"T1", "T2"}, closed.AllowedTeams)
	require.True(t, closed.TeamAllowed("T2"))
	require.False(t, closed.TeamAllowed("T3"))
	require.False(t, closed.TeamAllowed(""))

	key := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		env  func(string) string
		on   bool
		err  string
	}{
		{"Off", env(), false, ""},
		{"NoSecret", env("SLACK_CLIENT_ID", "1.2", "SLACK_REDIRECT_URI", "https://x/cb", "WEFT_ENCRYPTION_KEY", key), false, "SLACK_CLIENT_SECRET"},
		{"NoKey", env("SLACK_CLIENT_ID", "1.2", "SLACK_CLIENT_SECRET", "s", "SLACK_REDIRECT_URI", "https://x/cb"), false, "WEFT_ENCRYPTION_KEY"},
		{"On", env("SLACK_CLIENT_ID", "1.2", "SLACK_CLIENT_SECRET", "s", "SLACK_REDIRECT_URI", "https://x/cb", "WEFT_ENCRYPTION_KEY", key,
			"SLACK_ALLOWED_TEAMS", "T1"), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, tokens, err := newSlackOAuth(loadSlackInstall(tc.env), nil, slog.New(slog.DiscardHandler))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.on, o != nil)
			require.Equal(t, tc.on, tokens != nil)
			if o != nil {
				require.False(t, o.Allowed("T9"), "the install door applies SLACK_ALLOWED_TEAMS")
			}
		})
	}
}
