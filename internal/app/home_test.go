package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHomeNamesEveryPlatform: the page a browser pointed at weft sees
// names the four platforms weft answers on.
func TestHomeNamesEveryPlatform(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	handleHome().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusOK, w.Code)
	for _, p := range []string{"Linear", "Discord", "Slack", "GitHub"} {
		require.Contains(t, w.Body.String(), p)
	}
}
