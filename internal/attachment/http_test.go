package attachment

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

// TestHTTPDownload: files come only from the allowed hosts, a redirect
// elsewhere is refused, and an error status is an error.
func TestHTTPDownload(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("elsewhere")) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte("content"))
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	host := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Host }
	h := HTTP{Hosts: []string{host(srv)}}

	tests := []struct {
		url, want, err string
	}{
		{url: srv.URL + "/ok", want: "content"},
		{url: srv.URL + "/away", err: "redirect to " + host(other) + " refused"},
		{url: srv.URL + "/missing", err: "404"},
		{url: other.URL + "/x", err: "not a host files are fetched from"},
		{url: "file:///etc/passwd", err: "not a host files are fetched from"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			var buf bytes.Buffer
			err := h.Download(t.Context(), thread.File{Name: "f", URL: tt.url}, &buf)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.NotContains(t, buf.String(), "elsewhere")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, buf.String())
		})
	}
}
