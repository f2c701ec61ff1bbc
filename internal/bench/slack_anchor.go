package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/slack"
)

// The anchor of `weft bench slack`'s acknowledgements is the least a signed
// Events API delivery can cost on this machine and database, as linear's
// (serveMinimal): read the body, verify Slack's v0 signature, take the
// event id, one insert, one commit, 200. It runs as a child process like
// weft serve (`weft-bench slack -anchor-serve ADDR`), on the same scratch
// database, driven by the same generator at the same rate once weft's run
// is over.

// serveSlackAnchor serves the anchor on addr until ctx ends.
func serveSlackAnchor(ctx context.Context, url, addr, secret string) error {
	return serveMinimal(ctx, url, addr, "/webhooks/slack", func(h http.Header, body []byte) (string, error) {
		if err := slack.Verify(h, body, secret); err != nil {
			return "", err
		}
		var envelope struct {
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal(body, &envelope); err != nil || envelope.EventID == "" {
			return "", errors.Join(errors.New("no event id"), err)
		}
		return envelope.EventID, nil
	})
}

// startSlackAnchor starts the anchor as a child on the database at url and
// returns it with its door's URL.
func startSlackAnchor(ctx context.Context, url, secret string) (*kit.Process, string, error) {
	p, addr, err := startMinimal(ctx, "slack", []string{"DATABASE_URL=" + url, "SLACK_SIGNING_SECRET=" + secret})
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + addr + "/webhooks/slack", nil
}
