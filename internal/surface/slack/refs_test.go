package slack

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestThreadLink(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ref, channel, ts string
		ok               bool
	}{
		{"https://acme.slack.com/archives/C123/p1700000000123456", "C123", "1700000000.123456", true},
		{"  https://acme.slack.com/archives/C123/p1700000000123456/  ", "C123", "1700000000.123456", true},
		{"<https://acme.slack.com/archives/C123/p1700000000123456>", "C123", "1700000000.123456", true},
		{"<https://acme.slack.com/archives/C123/p1700000000123456|a thread>", "C123", "1700000000.123456", true},
		{"https://acme.enterprise.slack.com/archives/G0PRIV/p1700000000123456", "G0PRIV", "1700000000.123456", true},
		{"https://acme.slack.com/archives/C123/p1700000099000001?thread_ts=1700000000.123456&cid=C123", "C123", "1700000000.123456", true},
		{"https://acme.slack.com/archives/C123/p1700000099000001?thread_ts=bogus", "C123", "1700000099.000001", true},
		{"http://acme.slack.com/archives/C123/p1700000000123456", "", "", false},
		{"https://slack.com.evil.example/archives/C123/p1700000000123456", "", "", false},
		{"https://acme.slack.com/archives/C123", "", "", false},
		{"https://acme.slack.com/archives/C123/p17000000001234", "", "", false},
		{"https://acme.slack.com/archives/c123/p1700000000123456", "", "", false},
		{"https://linear.app/acme/issue/ENG-1", "", "", false},
		{"ENG-1", "", "", false},
		{"", "", "", false},
	} {
		channel, ts, ok := threadLink(tt.ref)
		require.Equal(t, tt.ok, ok, tt.ref)
		require.Equal(t, tt.channel, channel, tt.ref)
		require.Equal(t, tt.ts, ts, tt.ref)
	}
}
