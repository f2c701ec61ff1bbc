package oauth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/surface/oauth"
)

func TestState(t *testing.T) {
	t.Parallel()
	secret := []byte("state-secret")
	now := time.Now()
	st, err := oauth.SignState(secret, "linear", now.Add(10*time.Minute))
	require.NoError(t, err)
	other, err := oauth.SignState(secret, "linear", now.Add(10*time.Minute))
	require.NoError(t, err)
	require.NotEqual(t, st, other, "states must not be predictable")

	require.NoError(t, oauth.VerifyState(secret, "linear", st, now))
	msg, mac, _ := strings.Cut(st, ".")
	tests := map[string]struct {
		secret  []byte
		purpose string
		state   string
		now     time.Time
	}{
		"Expired":      {secret, "linear", st, now.Add(11 * time.Minute)},
		"WrongSecret":  {[]byte("other"), "linear", st, now},
		"WrongPurpose": {secret, "slack", st, now},
		"NoSecret":     {nil, "linear", st, now},
		"Tampered":     {secret, "linear", msg + "." + strings.ToUpper(mac), now},
		"Swapped":      {secret, "linear", msg + "." + strings.SplitN(other, ".", 2)[1], now},
		"Empty":        {secret, "linear", "", now},
		"NotBase64":    {secret, "linear", "!!.!!", now},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, oauth.VerifyState(tt.secret, tt.purpose, tt.state, tt.now), oauth.ErrBadState)
		})
	}
}
