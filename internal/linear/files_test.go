package linear_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestUploadFiles: markdown images of Linear's uploads become files to
// fetch with the workspace's token, each once; images elsewhere stay text.
// With Linear's endpoint, that is https on uploads.linear.app alone; with
// another endpoint (a fake's), its scheme and host as well.
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
		{name: "Linear's API host", md: "![x](https://api.linear.app/a.png)"},
		{name: "a fake's host", md: "![x](http://127.0.0.1:8080/uploads/a.png)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, linear.Uploads{}.Files("org1", tt.md))
			require.Equal(t, tt.want, linear.NewUploads(linear.DefaultEndpoint).Files("org1", tt.md))
		})
	}

	fake := linear.NewUploads("http://127.0.0.1:8080/graphql")
	const there = "http://127.0.0.1:8080/uploads/org1/shot"
	require.Equal(t, []thread.File{{Name: "a", MediaType: "image/*", URL: up, Workspace: "org1"}, {Name: "b", MediaType: "image/*", URL: there, Workspace: "org1"}},
		fake.Files("org1", "![a]("+up+") ![b]("+there+") ![c](https://127.0.0.1:8080/x) ![d](http://127.0.0.1:8081/x)"))
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

	// Against Linear itself, only uploads.linear.app gets the token: not
	// even Linear's API host.
	prod := linear.NewClient(linear.ClientDeps{Tokens: tokens, Endpoint: linear.DefaultEndpoint})
	require.ErrorContains(t, prod.Download(t.Context(), thread.File{Name: "x", URL: "https://api.linear.app/x", Workspace: lineartest.OrganizationID}, &buf), "not a Linear upload")
	require.ErrorContains(t, prod.Download(t.Context(), thread.File{Name: "x", URL: u, Workspace: lineartest.OrganizationID}, &buf), "not a Linear upload")
}

// TestDownloadRedirect: a redirect off the uploads' host is refused, so
// the token never follows it; the other host gets no request.
func TestDownloadRedirect(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x.png", http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	c := linear.NewClient(linear.ClientDeps{Endpoint: redirect.URL + "/graphql", Tokens: linear.StaticToken(lineartest.AccessToken)})
	var buf bytes.Buffer
	require.ErrorContains(t, c.Download(t.Context(), thread.File{Name: "x", URL: redirect.URL + "/uploads/x", Workspace: lineartest.OrganizationID}, &buf), "refused")
	require.Zero(t, elsewhere.Load())
}
