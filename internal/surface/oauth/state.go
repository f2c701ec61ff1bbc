// Package oauth is the install flow every platform with an OAuth app
// shares: a signed state bound to the browser by a cookie, the redirect to
// the platform's consent page, and the callback that checks the state,
// trades the code and stores the installation. A platform supplies its
// authorize URL, its code exchange and how to save what it got.
package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrBadState is returned by VerifyState for a state that was not signed
// with the secret for this purpose, or has expired.
var ErrBadState = errors.New("oauth: invalid or expired state")

// stateNonceLen is the random part of a state: enough that two states
// never collide, so a captured state cannot be predicted.
const stateNonceLen = 16

// SignState returns an OAuth state valid until expires: a random nonce and
// the expiry, signed with secret for purpose (the platform's name), so
// that the callback can check it without server-side storage and one
// platform's state is refused by another's callback.
func SignState(secret []byte, purpose string, expires time.Time) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("oauth: sign state: empty secret")
	}
	msg := make([]byte, stateNonceLen+8)
	if _, err := rand.Read(msg[:stateNonceLen]); err != nil {
		return "", fmt.Errorf("oauth: state nonce: %w", err)
	}
	binary.BigEndian.PutUint64(msg[stateNonceLen:], uint64(expires.Unix()))
	enc := base64.RawURLEncoding
	return enc.EncodeToString(msg) + "." + enc.EncodeToString(stateMAC(secret, purpose, msg)), nil
}

// VerifyState checks a state from SignState: signature first, then expiry.
func VerifyState(secret []byte, purpose, state string, now time.Time) error {
	if len(secret) == 0 {
		return ErrBadState
	}
	enc := base64.RawURLEncoding
	msgPart, macPart, ok := strings.Cut(state, ".")
	msg, err1 := enc.DecodeString(msgPart)
	mac, err2 := enc.DecodeString(macPart)
	if !ok || err1 != nil || err2 != nil || len(msg) != stateNonceLen+8 {
		return ErrBadState
	}
	if !hmac.Equal(mac, stateMAC(secret, purpose, msg)) {
		return ErrBadState
	}
	if now.Unix() > int64(binary.BigEndian.Uint64(msg[stateNonceLen:])) {
		return ErrBadState
	}
	return nil
}

func stateMAC(secret []byte, purpose string, msg []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("weft oauth state\x00" + purpose + "\x00"))
	m.Write(msg)
	return m.Sum(nil)
}
