package github_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/surface/webhook"
)

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	secret := []byte("s3cret")
	body := []byte(`{"action":"created"}`)
	good := github.Sign(secret, body)
	sha1Sig := func() string {
		m := hmac.New(sha1.New, secret)
		m.Write(body)
		return "sha1=" + hex.EncodeToString(m.Sum(nil))
	}()
	for _, tc := range []struct {
		name   string
		secret []byte
		body   []byte
		sig    string
		ok     bool
	}{
		{"good", secret, body, good, true},
		{"forged with another secret", secret, body, github.Sign([]byte("other"), body), false},
		{"body changed", secret, []byte(`{"action":"deleted"}`), good, false},
		{"body truncated", secret, body[:len(body)-1], good, false},
		{"signature truncated", secret, body, good[:len(good)-2], false},
		{"signature odd hex", secret, body, good[:len(good)-1], false},
		{"signature too long", secret, body, good + "00", false},
		{"sha1 prefix", secret, body, sha1Sig, false},
		{"sha256 digest under sha1 prefix", secret, body, "sha1=" + strings.TrimPrefix(good, "sha256="), false},
		{"upper-case prefix", secret, body, "SHA256=" + strings.TrimPrefix(good, "sha256="), false},
		{"no prefix", secret, body, strings.TrimPrefix(good, "sha256="), false},
		{"empty", secret, body, "", false},
		{"not hex", secret, body, "sha256=" + strings.Repeat("zz", 32), false},
		{"no secret configured", nil, body, github.Sign(nil, body), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := github.VerifySignature(tc.secret, tc.body, tc.sig)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// TestReadWebhook drives the handler helper with forged, truncated,
// oversized and malformed deliveries: each a clear 4xx, and only a good
// one parsed.
func TestReadWebhook(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	c := newClient(t, s)
	body := []byte(`{"action":"created","installation":{"id":1},"repository":{"id":2,"name":"widgets","owner":{"login":"acme"}},` +
		`"issue":{"number":3},"comment":{"id":4,"body":"hey @weft-test look","user":{"login":"alice","id":7,"type":"User"}},"sender":{"login":"alice"}}`)
	good := s.Sign(github.EventIssueComment, body)
	for _, tc := range []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"good", func() *http.Request { return good.Request("/webhooks/github") }, http.StatusOK},
		{"forged", func() *http.Request {
			return githubtest.SignWith("wrong", good.ID, github.EventIssueComment, body).Request("/webhooks/github")
		}, http.StatusUnauthorized},
		{"unsigned", func() *http.Request {
			r := good.Request("/webhooks/github")
			r.Header.Del(github.HeaderSignature)
			return r
		}, http.StatusUnauthorized},
		{"sha1 only", func() *http.Request {
			r := good.Request("/webhooks/github")
			r.Header.Del(github.HeaderSignature)
			r.Header.Set(github.HeaderSignature, r.Header.Get("X-Hub-Signature"))
			return r
		}, http.StatusUnauthorized},
		{"truncated", func() *http.Request {
			d := good
			d.Body = body[:len(body)/2]
			return d.Request("/webhooks/github")
		}, http.StatusUnauthorized},
		{"over 25 MB", func() *http.Request {
			return s.Sign(github.EventIssueComment, append(bytes.Repeat([]byte(" "), github.MaxPayload), body...)).Request("/webhooks/github")
		}, http.StatusRequestEntityTooLarge},
		{"over 25 MB, length unsaid", func() *http.Request {
			r := s.Sign(github.EventIssueComment, append(bytes.Repeat([]byte(" "), github.MaxPayload), body...)).Request("/webhooks/github")
			r.ContentLength = -1
			return r
		}, http.StatusRequestEntityTooLarge},
		{"over what is parsed, forged", func() *http.Request {
			return githubtest.SignWith("wrong", good.ID, github.EventIssueComment,
				append(bytes.Repeat([]byte(" "), github.MaxParsed), body...)).Request("/webhooks/github")
		}, http.StatusUnauthorized},
		{"no delivery id", func() *http.Request {
			r := good.Request("/webhooks/github")
			r.Header.Del(github.HeaderDelivery)
			return r
		}, http.StatusBadRequest},
		{"signed garbage", func() *http.Request {
			return s.Sign(github.EventIssueComment, []byte(`{"action":`)).Request("/webhooks/github")
		}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			r := tc.req()
			var got *github.Event
			reject := webhook.Rejecter(r.Context(), w, slog.New(slog.DiscardHandler), "github_webhook_rejected")
			if ev, ok := c.ReadWebhook(w, r, reject); ok {
				got = &ev
				w.WriteHeader(http.StatusOK)
			}
			require.Equal(t, tc.status, w.Code)
			if tc.status != http.StatusOK {
				require.Nil(t, got)
				return
			}
			require.Equal(t, good.ID, got.Delivery)
			require.Equal(t, github.IntentMention, got.Intent)
			require.Equal(t, int64(4), got.Comment.ID)
		})
	}
	// A genuine delivery too large to parse is verified whole, but only
	// its headers are read: an event weft does not act on.
	d := s.Sign(github.EventIssueComment, append(bytes.Repeat([]byte(" "), github.MaxParsed), body...))
	w := httptest.NewRecorder()
	r := d.Request("/webhooks/github")
	r.ContentLength = -1
	ev, ok := c.ReadWebhook(w, r, webhook.Rejecter(r.Context(), w, slog.New(slog.DiscardHandler), "github_webhook_rejected"))
	require.True(t, ok, "status %d", w.Code)
	require.Equal(t, github.Event{Delivery: d.ID, Name: github.EventIssueComment, Oversized: true}, ev)
}

// TestReadSigned: the body is read through the HMAC in full, up to
// GitHub's 25 MB, but only its first MaxParsed bytes are kept.
func TestReadSigned(t *testing.T) {
	t.Parallel()
	secret := []byte("s")
	for _, tc := range []struct {
		name  string
		n     int
		whole bool
		err   error
	}{
		{"small", 10, true, nil},
		{"at what is parsed", github.MaxParsed, true, nil},
		{"over what is parsed", github.MaxParsed + 1, false, nil},
		{"at 25 MB", github.MaxPayload, false, nil},
		{"over 25 MB", github.MaxPayload + 1, false, github.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := bytes.Repeat([]byte("x"), tc.n)
			got, err := github.ReadSigned(secret, bytes.NewReader(body), github.Sign(secret, body))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.whole, got.Whole)
			require.Len(t, got.Body, min(tc.n, github.MaxParsed))
			body[len(body)-1] = 'y'
			_, err = github.ReadSigned(secret, bytes.NewReader(body), github.Sign(secret, body[:len(body)-1]))
			require.ErrorIs(t, err, github.ErrSignature, "the bytes past what is kept are signed too")
		})
	}
}

func TestMentions(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		"@weft-test please look":             true,
		"hey @Weft-Test, please":             true,
		"cc @weft-test.":                     true,
		"(@weft-test)":                       true,
		"@weft-test[bot] do it":              true,
		"line one\n@weft-test":               true,
		"@weft-tester please":                false,
		"@weft-test-2 please":                false,
		"mail me@weft-test.dev":              false,
		"see acme/@weft-test":                false,
		"`@weft-test` is our bot":            false,
		"```\n@weft-test run\n```\nthanks":   false,
		"> @weft-test said this\n\nagreed":   false,
		"<!-- weft:x @weft-test -->":         false,
		"no mention here":                    false,
		"> quoted\n@weft-test a new request": true,
	} {
		require.Equal(t, want, github.Mentions(body, githubtest.AppSlug), body)
	}
}
