package github

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

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

// MaxPayload is GitHub's own cap on a webhook payload ("Payloads are
// capped at 25 MB"): a longer body is not GitHub's, and is refused unread.
const MaxPayload = 25 << 20

// MaxParsed is how much of a delivery's body weft keeps to parse. The
// largest delivery weft acts on, a comment and its issue or pull request
// (each body at most 65,536 characters, even escaped well under 1 MiB), is
// within it; a genuine delivery above it (a push of many commits, a huge
// pull request) is none that weft answers: it is verified, acknowledged
// and recorded as ignored without being held in memory whole.
const MaxParsed = 2 << 20

// bodyReadTimeout bounds reading a delivery: GitHub gives up on an answer
// after 10 s.
const bodyReadTimeout = 8 * time.Second

// ErrTooLarge: the body is longer than MaxPayload.
var ErrTooLarge = errors.New("github: webhook payload over 25 MB")

// Signed is a delivery's body, read and its signature verified.
type Signed struct {
	// Body is the body, or its first MaxParsed bytes when not Whole.
	Body []byte
	// Whole: Body is all of it.
	Whole bool
}

// ReadSigned reads body (at most MaxPayload bytes) through the HMAC of
// secret, keeping the first MaxParsed bytes, and checks X-Hub-Signature-256
// (sig) on all of it in constant time: nothing of a forged body is parsed,
// and memory stays bounded whatever its size.
func ReadSigned(secret []byte, body io.Reader, sig string) (Signed, error) {
	if len(secret) == 0 {
		return Signed{}, ErrNoSecret
	}
	m := hmac.New(sha256.New, secret)
	var kept bytes.Buffer
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := body.Read(buf)
		if k > 0 {
			n += int64(k)
			if n > MaxPayload {
				return Signed{}, ErrTooLarge
			}
			m.Write(buf[:k])
			if room := MaxParsed - kept.Len(); room > 0 {
				kept.Write(buf[:min(k, room)])
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return Signed{}, ErrTooLarge
			}
			return Signed{}, fmt.Errorf("github: read webhook body: %w", err)
		}
	}
	hexSig, ok := strings.CutPrefix(sig, signaturePrefix)
	if !ok {
		return Signed{}, fmt.Errorf("%w: not %s", ErrSignature, strings.TrimSuffix(signaturePrefix, "="))
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return Signed{}, fmt.Errorf("%w: not a sha256 hex digest", ErrSignature)
	}
	if !hmac.Equal(got, m.Sum(nil)) {
		return Signed{}, ErrSignature
	}
	return Signed{Body: kept.Bytes(), Whole: n <= MaxParsed}, nil
}

// ReadDelivery reads a delivery's body (ReadSigned) within bodyReadTimeout
// and answers a refused one itself through reject: 413 for a body over
// MaxPayload (at once when its Content-Length says so), 400 for one
// unreadable or late, 401 for a forged one. It reports whether to go on.
func (c *Client) ReadDelivery(w http.ResponseWriter, r *http.Request, reject webhook.Reject) (Signed, bool) {
	if r.ContentLength > MaxPayload {
		reject(http.StatusRequestEntityTooLarge, "payload over 25 MB", ErrTooLarge)
		return Signed{}, false
	}
	rc := http.NewResponseController(w)
	// Setting fails only where there is no connection (a test's recorder).
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	s, err := ReadSigned(c.secret, http.MaxBytesReader(w, r.Body, MaxPayload), r.Header.Get(HeaderSignature))
	switch {
	case errors.Is(err, ErrTooLarge):
		reject(http.StatusRequestEntityTooLarge, "payload over 25 MB", err)
		return Signed{}, false
	case errors.Is(err, ErrSignature), errors.Is(err, ErrNoSecret):
		_ = rc.SetReadDeadline(time.Time{})
		reject(http.StatusUnauthorized, "invalid signature", err)
		return Signed{}, false
	case err != nil:
		// The deadline stays: net/http would otherwise wait, with none,
		// to drain the rest of a late body after the answer.
		reject(http.StatusBadRequest, "unreadable body", err)
		return Signed{}, false
	}
	// The deadline was for the body alone: left set, it would cancel the
	// request's context while the delivery is recorded.
	_ = rc.SetReadDeadline(time.Time{})
	return s, true
}

// ParseDelivery parses a verified delivery. One too large to keep whole
// is only its headers' event and delivery id, IntentIgnore.
func (c *Client) ParseDelivery(r *http.Request, s Signed) (Event, error) {
	name, delivery := r.Header.Get(HeaderEvent), r.Header.Get(HeaderDelivery)
	if !s.Whole {
		if name == "" || delivery == "" {
			return Event{}, fmt.Errorf("%w: missing %s or %s", ErrDelivery, HeaderEvent, HeaderDelivery)
		}
		return Event{Delivery: delivery, Name: name, Oversized: true}, nil
	}
	return c.Parse(name, delivery, s.Body)
}

// ReadWebhook reads a delivery (ReadDelivery), verifying its signature on
// the raw bytes before anything parses them, and parses it
// (ParseDelivery), answering a malformed one 400 through reject. It
// reports whether to go on.
func (c *Client) ReadWebhook(w http.ResponseWriter, r *http.Request, reject webhook.Reject) (Event, bool) {
	s, ok := c.ReadDelivery(w, r, reject)
	if !ok {
		return Event{}, false
	}
	ev, err := c.ParseDelivery(r, s)
	if err != nil {
		reject(http.StatusBadRequest, "malformed delivery", err)
		return Event{}, false
	}
	return ev, true
}
