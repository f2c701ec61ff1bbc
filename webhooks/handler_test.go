package webhooks_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/webhooks"
)

// quiet is a platform without HTTP doors.
type quiet struct{}

func (quiet) Name() thread.Platform { return "quiet" }
func (quiet) Door() surface.Door    { return surface.Door{Name: "quiet"} }

// routed mounts one webhook route, counted and admitted as a platform's.
type routed struct{ quiet }

func (routed) Routes(r chi.Router, m surface.Mount) {
	r.With(m.Count("routed"), m.Buffer, m.Admit).Post("/webhooks/routed", func(w http.ResponseWriter, r *http.Request) {
		webhook.NoteOutcome(r.Context(), "noted")
		w.WriteHeader(http.StatusNoContent)
	})
}

// TestNewHandlerMountsEachRoutedPlatform: a Routed platform's routes are
// served with the shared middleware; a platform without doors adds none.
func TestNewHandlerMountsEachRoutedPlatform(t *testing.T) {
	t.Parallel()
	h := webhooks.NewHandler(webhooks.Deps{Logger: logtest.New(t), Platforms: []surface.Platform{quiet{}, routed{}}})
	for path, want := range map[string]int{"/webhooks/routed": http.StatusNoContent, "/webhooks/quiet": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		require.Equal(t, want, rec.Code, path)
	}
}
