package linear_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestUploadFiles: markdown images of Linear's uploads become files to
// fetch with the workspace's token, each once; images elsewhere stay text.
func TestUploadFiles(t *testing.T) {
	t.Parallel()
	const up = "https://uploads.linear.app/org/abc/def"
	tests := []struct {
		name, md string
		want     []thread.File
	}{
		{name: "one image", md: "see ![screenshot](" + up + ")", want: []thread.File{{Name: "screenshot", MediaType: "image/*", URL: up, Workspace: "org1"}}},
		{name: "no alt text, a title", md: "![](" + up + ` "title")`, want: []thread.File{{Name: "def", MediaType: "image/*", URL: up, Workspace: "org1"}}},
		{name: "twice is once", md: "![a](" + up + ") ![b](" + up + ")", want: []thread.File{{Name: "a", MediaType: "image/*", URL: up, Workspace: "org1"}}},
		{name: "elsewhere", md: "![x](https://example.com/a.png) ![y](http://uploads.linear.app/a)"},
		{name: "a link, not an image", md: "[doc](" + up + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, linear.UploadFiles("org1", tt.md))
		})
	}
}

// TestDownload: an upload is fetched with the workspace's token; a token
// of another workspace gets 401, and a host other than Linear's gets no
// request at all.
func TestDownload(t *testing.T) {
	t.Parallel()
	srv := lineartest.NewServer(t)
	srv.AddToken("lin_oauth_other", "org-other")
	png := []byte("\x89PNG\r\n\x1a\nimage")
	u := srv.AddUpload(lineartest.OrganizationID, "shot", lineartest.Upload{ContentType: "image/png", Content: png})
	tokens := tokenFunc(func(_ context.Context, org string) (string, error) {
		if org == lineartest.OrganizationID {
			return lineartest.AccessToken, nil
		}
		return "lin_oauth_other", nil
	})
	c := linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: tokens})

	var buf bytes.Buffer
	require.NoError(t, c.Download(t.Context(), thread.File{Name: "shot", URL: u, Workspace: lineartest.OrganizationID}, &buf))
	require.Equal(t, png, buf.Bytes())

	buf.Reset()
	require.ErrorContains(t, c.Download(t.Context(), thread.File{Name: "shot", URL: u, Workspace: "org-other"}, &buf), "401")
	require.Empty(t, buf.Bytes())
	require.ErrorContains(t, c.Download(t.Context(), thread.File{Name: "x", URL: "https://example.com/x", Workspace: lineartest.OrganizationID}, &buf), "not a Linear upload")
}
