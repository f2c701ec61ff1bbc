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

// Download writes the upload at f.URL into w, fetched with the token of
// f.Workspace (the organisation). The token is sent only to
// uploads.linear.app (or the API endpoint's host, a fake's), redirects
// included.
func (c *Client) Download(ctx context.Context, f thread.File, w io.Writer) error {
	u, err := url.Parse(f.URL)
	if err != nil || !c.fileHost(u) {
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

func (c *Client) fileHost(u *url.URL) bool {
	return u.Scheme == "https" && strings.EqualFold(u.Host, UploadsHost) ||
		c.endpoint != nil && u.Scheme == c.endpoint.Scheme && strings.EqualFold(u.Host, c.endpoint.Host)
}

// markdownImage finds a markdown image, ![alt](url "title").
var markdownImage = regexp.MustCompile(`!\[([^\]]*)\]\((\S+?)(?:\s+"[^"]*")?\)`)

// UploadFiles are the images of Linear's uploads (https on
// uploads.linear.app) that markdown (an issue's description, a comment, a
// prompt) shows, each once, to be fetched with the token of
// organizationID. An image on any other host stays text: weft fetches
// nothing a message points at elsewhere.
func UploadFiles(organizationID, markdown string) []thread.File {
	var out []thread.File
	for _, m := range markdownImage.FindAllStringSubmatch(markdown, -1) {
		u, err := url.Parse(m[2])
		if err != nil || u.Scheme != "https" || !strings.EqualFold(u.Host, UploadsHost) ||
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
