package surface_test

import (
	"errors"
	"testing"
	"time"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

func TestSendErrorMarksOnlyWhatWillNotGetBetter(t *testing.T) {
	t.Parallel()
	gone := errors.New("not installed")
	tests := []struct {
		name    string
		err     error
		invalid bool
	}{
		{"server", &surface.Error{Platform: "p", Kind: surface.KindServer}, false},
		{"rate limited", &surface.Error{Platform: "p", Kind: surface.KindRateLimited, RetryAfter: time.Second}, false},
		{"network", errors.New("connection reset"), false},
		{"auth", &surface.Error{Platform: "p", Kind: surface.KindAuth}, true},
		{"not found", &surface.Error{Platform: "p", Kind: surface.KindNotFound}, true},
		{"permanent sentinel", gone, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := surface.SendError("p", thread.Outbox{Kind: thread.OutboxThought}, tt.err, gone)
			if got := errors.Is(err, thread.ErrInvalid); got != tt.invalid {
				t.Fatalf("errors.Is(%v, ErrInvalid) = %v, want %v", err, got, tt.invalid)
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("%v does not wrap %v", err, tt.err)
			}
		})
	}
}

func TestErrorMessageNamesWhatIsKnown(t *testing.T) {
	t.Parallel()
	e := &surface.Error{Platform: "slack", Op: "chat.postMessage", Kind: surface.KindForbidden,
		Status: 200, Code: "missing_scope", Detail: "needs chat:write", Err: errors.New("missing_scope")}
	want := "slack: chat.postMessage: forbidden (status 200, missing_scope, needs chat:write): missing_scope"
	if e.Error() != want {
		t.Fatalf("Error() = %q, want %q", e.Error(), want)
	}
	bare := &surface.Error{Platform: "linear", Op: "create activity", Kind: surface.KindServer}
	if got := bare.Error(); got != "linear: create activity: server" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestBodyRefusesAnotherPlatformsRow(t *testing.T) {
	t.Parallel()
	o := thread.Outbox{Platform: thread.PlatformSlack, Kind: thread.OutboxThought, Body: []byte(`{"text":"hi"}`)}
	if _, err := surface.Body(thread.PlatformDiscord, o); !errors.Is(err, thread.ErrInvalid) {
		t.Fatalf("Body of a Slack row for Discord = %v, want ErrInvalid", err)
	}
	body, err := surface.Body(thread.PlatformSlack, o)
	if err != nil || body.Text != "hi" {
		t.Fatalf("Body = %+v, %v", body, err)
	}
	o.Body = []byte(`{`)
	if _, err := surface.Body(thread.PlatformSlack, o); !errors.Is(err, thread.ErrInvalid) {
		t.Fatalf("Body of a malformed row = %v, want ErrInvalid", err)
	}
}
