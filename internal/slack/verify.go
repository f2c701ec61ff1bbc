package slack

import (
	"errors"
	"fmt"
	"net/http"

	goslack "github.com/slack-go/slack"
)

// ErrUnauthorized marks a request that is not provably from Slack: a
// missing or wrong v0 signature, or a timestamp outside the 5-minute window.
var ErrUnauthorized = errors.New("slack: request not verified")

// Verify checks a request's v0 signature over its raw body with the
// signing secret, in constant time, and that its timestamp is within five
// minutes of now (either way).
func Verify(h http.Header, body []byte, secret string) error {
	if secret == "" {
		return fmt.Errorf("%w: no signing secret", ErrUnauthorized)
	}
	sv, err := goslack.NewSecretsVerifier(h, secret)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	if _, err := sv.Write(body); err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	if err := sv.Ensure(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	return nil
}
