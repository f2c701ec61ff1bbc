package secret_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/secret"
)

func testKey() []byte { return bytes.Repeat([]byte{0x42}, secret.KeySize) }

func TestParseKey(t *testing.T) {
	t.Parallel()
	key := testKey()
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"Hex", hex.EncodeToString(key), true},
		{"Base64", base64.StdEncoding.EncodeToString(key), true},
		{"Base64Raw", base64.RawStdEncoding.EncodeToString(key), true},
		{"Base64URL", base64.URLEncoding.EncodeToString(key), true},
		{"Whitespace", "  " + hex.EncodeToString(key) + "\n", true},
		{"TooShort", base64.StdEncoding.EncodeToString(key[:16]), false},
		{"TooLong", hex.EncodeToString(append(key, 1)), false},
		{"Garbage", strings.Repeat("z", 64), false},
		{"Empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := secret.ParseKey(tt.in)
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, key, got)
		})
	}
}

func TestCipher(t *testing.T) {
	t.Parallel()
	c, err := secret.NewCipher(testKey())
	require.NoError(t, err)
	plain := []byte("lin_oauth_secret_token")
	ad := []byte("org-1/access")

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		sealed, err := c.Seal(plain, ad)
		require.NoError(t, err)
		require.NotContains(t, string(sealed), string(plain))
		got, err := c.Open(sealed, ad)
		require.NoError(t, err)
		require.Equal(t, plain, got)
	})
	t.Run("FreshNonceEachTime", func(t *testing.T) {
		t.Parallel()
		a, err := c.Seal(plain, ad)
		require.NoError(t, err)
		b, err := c.Seal(plain, ad)
		require.NoError(t, err)
		require.NotEqual(t, a, b)
	})
	t.Run("ErrDecrypt", func(t *testing.T) {
		t.Parallel()
		sealed, err := c.Seal(plain, ad)
		require.NoError(t, err)
		other, err := secret.NewCipher(bytes.Repeat([]byte{7}, secret.KeySize))
		require.NoError(t, err)
		tampered := bytes.Clone(sealed)
		tampered[len(tampered)-1] ^= 1
		for name, open := range map[string]func() ([]byte, error){
			"OtherAssociatedData": func() ([]byte, error) { return c.Open(sealed, []byte("org-2/access")) },
			"OtherKey":            func() ([]byte, error) { return other.Open(sealed, ad) },
			"Tampered":            func() ([]byte, error) { return c.Open(tampered, ad) },
			"Truncated":           func() ([]byte, error) { return c.Open(sealed[:10], ad) },
			"Empty":               func() ([]byte, error) { return c.Open(nil, ad) },
		} {
			_, err := open()
			require.ErrorIs(t, err, secret.ErrDecrypt, name)
		}
	})
	t.Run("BadKeySize", func(t *testing.T) {
		t.Parallel()
		_, err := secret.NewCipher(make([]byte, 16))
		require.Error(t, err)
	})
}
