package bench

import (
	"context"
	"errors"
	"net/http"

	"github.com/weft-dev/weft/internal/bench/kit"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
)

// The anchor of `weft bench github`'s acknowledgements is the least a
// signed GitHub delivery can cost on this machine and database, as
// linear's (serveMinimal): read the body, verify X-Hub-Signature-256, take
// X-GitHub-Delivery, one insert, one commit, 200. It runs as a child
// process like weft serve (`weft-bench github -anchor-serve ADDR`), on the
// same scratch database, driven by the same generator at the same rate
// once weft's run is over.

// serveGitHubAnchor serves the anchor on addr until ctx ends.
func serveGitHubAnchor(ctx context.Context, url, addr string, secret []byte) error {
	return serveMinimal(ctx, url, addr, "/webhooks/github", func(h http.Header, body []byte) (string, error) {
		if err := githubapi.VerifySignature(secret, body, h.Get(githubapi.HeaderSignature)); err != nil {
			return "", err
		}
		id := h.Get(githubapi.HeaderDelivery)
		if id == "" {
			return "", errors.New("no delivery id")
		}
		return id, nil
	})
}

// startGitHubAnchor starts the anchor as a child on the database at url
// and returns it with its door's URL.
func startGitHubAnchor(ctx context.Context, url string) (*kit.Process, string, error) {
	p, addr, err := startMinimal(ctx, "github", []string{"DATABASE_URL=" + url, "GITHUB_WEBHOOK_SECRET=" + githubtest.WebhookSecret})
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + addr + "/webhooks/github", nil
}
