package linear

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"
)

// ErrBadState is returned by VerifyState for a state parameter that was not
// signed with the secret or has expired.
var ErrBadState = errors.New("linear: invalid or expired OAuth state")

// stateNonceLen is the random part of a state: enough that two states never
// collide, so a captured state cannot be predicted.
const stateNonceLen = 16

// SignState returns an OAuth state parameter valid until expires: a random
// nonce and the expiry, signed with secret, so the callback can check it
// without server-side storage. To also bind the flow to the browser that
// started it, store the state in a cookie and compare it on the callback.
func SignState(secret []byte, expires time.Time) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("linear: sign state: empty secret")
	}
	msg := make([]byte, stateNonceLen+8)
	if _, err := rand.Read(msg[:stateNonceLen]); err != nil {
		return "", err
	}
	binary.BigEndian.PutUint64(msg[stateNonceLen:], uint64(expires.Unix()))
	enc := base64.RawURLEncoding
	return enc.EncodeToString(msg) + "." + enc.EncodeToString(stateMAC(secret, msg)), nil
}

// VerifyState checks a state from SignState: signature first, then expiry.
func VerifyState(secret []byte, state string, now time.Time) error {
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
	if !hmac.Equal(mac, stateMAC(secret, msg)) {
		return ErrBadState
	}
	if now.Unix() > int64(binary.BigEndian.Uint64(msg[stateNonceLen:])) {
		return ErrBadState
	}
	return nil
}

func stateMAC(secret, msg []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("weft linear oauth state\x00"))
	m.Write(msg)
	return m.Sum(nil)
}
