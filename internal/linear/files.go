package linear

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/weft-dev/weft/internal/thread"
)

// UploadsHost is where Linear keeps the files and images of issues and
// comments; fetching them takes the workspace's token.
const UploadsHost = "uploads.linear.app"

// Uploads tells which URLs are a workspace's uploads, the only ones weft
// fetches with the workspace's token: https on uploads.linear.app and,
// with an API endpoint other than Linear's (LINEAR_API_URL pointing at a
// fake or a proxy, which receives the token on every call already), that
// endpoint's scheme and host. The zero Uploads is Linear's alone.
type Uploads struct {
	endpoint *url.URL
}

// NewUploads is the Uploads of a client of endpoint: Linear's alone for
// DefaultEndpoint (or an endpoint without a host).
func NewUploads(endpoint string) Uploads {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || endpoint == DefaultEndpoint {
		return Uploads{}
	}
	return Uploads{endpoint: &url.URL{Scheme: u.Scheme, Host: u.Host}}
}

// Has reports whether u is an upload's URL.
func (up Uploads) Has(u *url.URL) bool {
	if u.Scheme == "https" && strings.EqualFold(u.Host, UploadsHost) {
		return true
	}
	return up.endpoint != nil && u.Scheme == up.endpoint.Scheme && strings.EqualFold(u.Host, up.endpoint.Host)
}

// Download writes the upload at f.URL into w, fetched with the token of
// f.Workspace (the organisation). The token is sent only to the client's
// Uploads, redirects included.
func (c *Client) Download(ctx context.Context, f thread.File, w io.Writer) error {
	u, err := url.Parse(f.URL)
	if err != nil || !c.uploads.Has(u) {
		return fmt.Errorf("linear: download %s: not a Linear upload", f.Name)
	}
	req, err := http.NewRequestWithContext(WithOrganization(ctx, f.Workspace), http.MethodGet, f.URL, nil)
	if err != nil {
		return fmt.Errorf("linear: download: %w", err)
	}
	resp, err := c.files.Do(req)
	if err != nil {
		return fmt.Errorf("linear: download %s: %w", f.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("linear: download %s: %s", f.Name, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// markdownImage finds a markdown image, ![alt](url "title").
var markdownImage = regexp.MustCompile(`!\[([^\]]*)\]\((\S+?)(?:\s+"[^"]*")?\)`)

// Files are the images of uploads that markdown (an issue's description,
// a comment, a prompt) shows, each once, to be fetched with the token of
// organizationID. An image on any other host stays text: weft fetches
// nothing a message points at elsewhere.
func (up Uploads) Files(organizationID, markdown string) []thread.File {
	var out []thread.File
	for _, m := range markdownImage.FindAllStringSubmatch(markdown, -1) {
		u, err := url.Parse(m[2])
		if err != nil || !up.Has(u) ||
			slices.ContainsFunc(out, func(f thread.File) bool { return f.URL == m[2] }) {
			continue
		}
		name := strings.TrimSpace(m[1])
		if name == "" {
			name = u.Path[strings.LastIndex(u.Path, "/")+1:]
		}
		out = append(out, thread.File{Name: name, MediaType: "image/*", URL: m[2], Workspace: organizationID})
	}
	return out
}
