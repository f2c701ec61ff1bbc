package attachment

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/weft-dev/weft/internal/thread"
)

// HTTP downloads files with a plain GET, for platforms whose file URLs
// need no token (a CDN that signs its URLs). It fetches only from
// Hosts, so a URL in a message cannot make weft fetch from anywhere else.
type HTTP struct {
	// Client is the client to use; nil is a plain one.
	Client *http.Client
	// Hosts are the hosts files may come from (host or host:port); a
	// subdomain of one is not another's.
	Hosts []string
}

// Download implements [Downloader].
func (h HTTP) Download(ctx context.Context, f thread.File, w io.Writer) error {
	u, err := url.Parse(f.URL)
	if err != nil {
		return fmt.Errorf("attachment: url: %w", err)
	}
	if !h.allowed(u) {
		return fmt.Errorf("attachment: %s is not a host files are fetched from", u.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return fmt.Errorf("attachment: %w", err)
	}
	client := http.Client{}
	if h.Client != nil {
		client = *h.Client
	}
	// A redirect stays among the hosts too.
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 || !h.allowed(req.URL) {
			return fmt.Errorf("attachment: redirect to %s refused", req.URL.Host)
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("attachment: get %s: %w", f.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("attachment: get %s: %s", f.Name, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

func (h HTTP) allowed(u *url.URL) bool {
	return (u.Scheme == "https" || u.Scheme == "http") && slices.Contains(h.Hosts, strings.ToLower(u.Host))
}
