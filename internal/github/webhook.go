package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/weft-dev/weft/internal/surface/webhook"
)

// Webhook headers GitHub sends with every delivery.
const (
	HeaderSignature = "X-Hub-Signature-256"
	HeaderEvent     = "X-GitHub-Event"
	HeaderDelivery  = "X-GitHub-Delivery"
)

// signaturePrefix names the only algorithm accepted: GitHub's legacy
// X-Hub-Signature (sha1=) is not.
const signaturePrefix = "sha256="

// Errors of a delivery that is refused before it is parsed.
var (
	// ErrSignature: the signature is missing, malformed or wrong.
	ErrSignature = errors.New("github: webhook signature mismatch")
	// ErrNoSecret: no webhook secret is configured, so nothing verifies.
	ErrNoSecret = errors.New("github: no webhook secret configured")
	// ErrDelivery: a verified delivery lacks its event or delivery id, or
	// its payload does not decode as its event.
	ErrDelivery = errors.New("github: malformed webhook delivery")
)

// VerifySignature checks X-Hub-Signature-256 (sig) against the HMAC-SHA256
// of exactly body under secret, in constant time.
func VerifySignature(secret, body []byte, sig string) error {
	if len(secret) == 0 {
		return ErrNoSecret
	}
	hexSig, ok := strings.CutPrefix(sig, signaturePrefix)
	if !ok {
		return fmt.Errorf("%w: not %s", ErrSignature, strings.TrimSuffix(signaturePrefix, "="))
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: not a sha256 hex digest", ErrSignature)
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrSignature
	}
	return nil
}

// Sign is the X-Hub-Signature-256 GitHub puts on body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return signaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// ReadWebhook reads a delivery's body bounded (webhook.ReadBody), verifies
// its signature on the raw bytes before anything parses them, and parses
// it. It answers a refused request itself through reject (413 oversized,
// 400 unreadable or malformed, 401 forged) and reports whether to go on.
func (c *Client) ReadWebhook(w http.ResponseWriter, r *http.Request, reject webhook.Reject) (Event, bool) {
	body, ok := webhook.ReadVerified(w, r, reject, "invalid signature", func(body []byte) error {
		return VerifySignature(c.secret, body, r.Header.Get(HeaderSignature))
	})
	if !ok {
		return Event{}, false
	}
	ev, err := c.Parse(r.Header.Get(HeaderEvent), r.Header.Get(HeaderDelivery), body)
	if err != nil {
		reject(http.StatusBadRequest, "malformed delivery", err)
		return Event{}, false
	}
	return ev, true
}
