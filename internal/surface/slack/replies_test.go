package slack

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/surface"
)

// TestFailureNotFound: Slack's own thread_not_found says the thread does
// not exist; an HTTP 404 from the API host says nothing about the thread
// (a proxy, a wrong SLACK_API_URL), so the model must not read it as
// "no such thread".
func TestFailureNotFound(t *testing.T) {
	t.Parallel()
	code := func(err error) httpapi.Code {
		var e *httpapi.Error
		require.True(t, errors.As(Failure(err), &e))
		return e.Code
	}
	thread := &surface.Error{Platform: "slack", Op: "conversations.replies", Kind: surface.KindNotFound, Status: http.StatusOK, Code: "thread_not_found"}
	require.Equal(t, httpapi.CodeNotFound, code(thread))
	host := &surface.Error{Platform: "slack", Op: "conversations.replies", Kind: surface.KindOfStatus(http.StatusNotFound), Status: http.StatusNotFound}
	require.Equal(t, httpapi.CodeUnavailable, code(host))
}
