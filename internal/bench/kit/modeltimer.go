package kit

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Tag marks the i-th message a bench posts, so that the model calls it
// causes can be told apart.
func Tag(i int) string { return "wbm-" + strconv.Itoa(i) }

// tagPattern finds tags in a model request.
var tagPattern = regexp.MustCompile(`wbm-(\d+)`)

// ModelTimer is a reverse proxy in front of the fake model that times each
// call, attributing it to the last tag in the request: the newest message
// of the conversation, the one that caused the turn.
type ModelTimer struct {
	*httptest.Server

	mu    sync.Mutex
	spent map[int]time.Duration
}

// NewModelTimer starts a timing proxy to the model at target.
func NewModelTimer(target string) (*ModelTimer, error) {
	u, err := neturl.Parse(target)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	t := &ModelTimer{spent: map[int]time.Duration{}}
	t.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		start := time.Now()
		proxy.ServeHTTP(w, r)
		took := time.Since(start)
		if m := tagPattern.FindAllSubmatch(body, -1); len(m) > 0 {
			tag, _ := strconv.Atoi(string(m[len(m)-1][1]))
			t.mu.Lock()
			t.spent[tag] += took
			t.mu.Unlock()
		}
	}))
	return t, nil
}

// Spent is the time the model calls caused by the tag's message took.
func (t *ModelTimer) Spent(tag int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent[tag]
}
