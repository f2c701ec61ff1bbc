package surface

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/internal/thread"
)

// Platform is what every platform offers weft: its name and its door.
// Everything else a platform may do is an optional capability below,
// found by type assertion, so that a platform implements only what it has
// (one has no gateway, another no OAuth install) and internal/app
// loops over one list of platforms for each. Capabilities whose types
// belong to another package (history, discovery and continuation sources
// for internal/tools, the replies source for internal/replies) are
// declared by the package that consumes them, and a platform satisfies
// them structurally: this package imports only internal/thread.
type Platform interface {
	// Name is the platform threads, attachments and outbox rows name.
	Name() thread.Platform
	// Door says whether this configuration turns the platform on, and why:
	// what an operator reads first when a platform stays silent.
	Door() Door
}

// Door is one way into weft, on or off, and why.
type Door struct {
	Name string
	On   bool
	Why  string
}

// Sender delivers an outbox row to the platform and returns the id the
// platform gave it. processor.Sender is the same interface.
type Sender interface {
	Send(ctx context.Context, o thread.Outbox) (externalID string, err error)
}

// Sending is a platform that delivers weft's replies.
type Sending interface {
	Platform
	// Sender is nil when the platform is off.
	Sender() Sender
}

// TurnHook is called once a turn has its lease and returns the function
// that ends what it started: a typing indicator, a "thinking" status.
type TurnHook func(ctx context.Context, threadID uuid.UUID) (done func())

// Hooking is a platform that shows a turn at work.
type Hooking interface {
	Platform
	// OnTurn is nil when the platform is off.
	OnTurn() TurnHook
}

// Routed is a platform with HTTP doors (webhooks, interactions, OAuth).
type Routed interface {
	Platform
	// Routes mounts the platform's handlers on r, recording through
	// m.Recorder, with the middleware m hands it; it mounts nothing for a
	// door that is off.
	Routes(r chi.Router, m Mount)
}

// Mount is what every platform's doors share, handed to Routes: the log,
// the tracer, and the middleware a webhook route is wrapped in. Each
// middleware is never nil.
type Mount struct {
	// Recorder records what the doors receive (the ingester).
	Recorder Recorder
	Logger   *slog.Logger
	// Tracer starts spans within a delivery's trace.
	Tracer trace.Tracer
	// Count counts each delivery on the route by its outcome (the one its
	// handler notes with webhook.NoteOutcome, or its status), and starts
	// the delivery's trace, for platform's deliveries.
	Count func(platform thread.Platform) func(http.Handler) http.Handler
	// Buffer reads a delivery's body, bounded, before the next middleware:
	// a slow body holds no intake slot.
	Buffer func(http.Handler) http.Handler
	// Admit works a delivery only while the intake has a slot for it, and
	// refuses it at once with a 503 otherwise.
	Admit func(http.Handler) http.Handler
}

// Running is a platform with workers of its own (a gateway or
// socket connection), started after the processor and stopped before
// it, so that the events they record find it running.
type Running interface {
	Platform
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Originating is a platform conversations come from (an issue),
// which a conversation continued elsewhere links back to.
type Originating interface {
	Platform
	// Origin labels and links where thread threadID comes from on this
	// platform; url is empty when it cannot be read (best effort), and the
	// error thread.ErrNotFound when the thread is not attached here.
	Origin(ctx context.Context, threadID uuid.UUID) (label, url string, err error)
}

// Describing is a platform that says where a thread is attached on it,
// for another platform's status command to list beside its own.
type Describing interface {
	Platform
	// Describe is one line naming the thread's conversation on this
	// platform and its state, or the error thread.ErrNotFound when the
	// thread is not attached here.
	Describe(ctx context.Context, threadID uuid.UUID) (string, error)
}

// Resolving is a platform whose conversations people name by something
// they type or paste (an issue key or URL, a thread's link).
// Continuing a conversation elsewhere (a platform's continue command) asks every platform in the list, so
// no platform's command names another.
type Resolving interface {
	Platform
	// Hint is what a person types to name one of its conversations, for
	// help text: "a thread's link".
	Hint() string
	// Resolve returns the thread ref names among organisation's threads,
	// or thread.ErrNotFound when it names none of this platform's: one of
	// another organisation looks the same, its existence not the asker's
	// to know. It works whether or not the platform is on.
	Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error)
}
