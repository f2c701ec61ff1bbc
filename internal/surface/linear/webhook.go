package linear

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// Doors are Linear's HTTP doors: its webhook deliveries and, with OAuth,
// the app's install flow.
type Doors struct {
	// WebhookSecret is the signing secret of Linear's webhooks
	// (LINEAR_WEBHOOK_SECRET). Empty leaves POST /webhooks/linear off.
	WebhookSecret []byte
	// OAuth enables the install flow; nil leaves it off, as in the
	// single-workspace LINEAR_ACCESS_TOKEN mode.
	OAuth *OAuth
	// Uploads are the URLs whose images in a prompt are read for the model
	// (the client's, linear.NewUploads of LINEAR_API_URL).
	Uploads linearapi.Uploads
}

// Routes mounts POST /webhooks/linear (counted, buffered, admitted) and
// the install flow, each when configured.
func (d Doors) Routes(r chi.Router, m surface.Mount) {
	if len(d.WebhookSecret) > 0 {
		r.With(m.Count(thread.PlatformLinear), m.Buffer, m.Admit).Method(http.MethodPost, "/webhooks/linear",
			handleLinearWebhook(m.Logger, m.Tracer, m.Recorder, d.WebhookSecret, d.Uploads))
	} else {
		m.Logger.Debug("linear webhooks off: no webhook signing secret")
	}
	if o := d.OAuth; o != nil {
		f := linearFlow(m.Logger, o)
		r.Method(http.MethodGet, f.Path()+"/install", f.Install())
		r.Method(http.MethodGet, f.Path()+"/callback", f.Callback())
	} else {
		m.Logger.Debug("linear oauth install off: no client credentials")
	}
}

// OAuth is the Linear app's OAuth install flow: where to send an admin,
// and what to do with the code Linear sends back.
type OAuth struct {
	ClientID string
	// RedirectURI is this server's /oauth/linear/callback as Linear knows
	// it; it must equal the one the Codes client was built with.
	RedirectURI string
	// StateSecret signs the state parameter (any server-side secret).
	StateSecret []byte
	// Codes exchanges the callback's code; *linear.OAuthClient.
	Codes CodeExchanger
	// Endpoint is Linear's GraphQL endpoint (linear.DefaultEndpoint), where
	// a new token asks which app user and workspace it belongs to.
	Endpoint   string
	HTTPClient *http.Client // nil: a default client
	// Installations stores the result; *Installations.
	Installations InstallationSaver
}

// CodeExchanger trades an OAuth authorization code for tokens.
type CodeExchanger interface {
	ExchangeCode(ctx context.Context, code string) (*linearapi.Token, error)
}

// InstallationSaver stores a workspace's installation.
type InstallationSaver interface {
	Save(ctx context.Context, tok *linearapi.Token, v *linearapi.Viewer) error
}

// maxDeliveryIDLen caps the Linear-Delivery header (a UUID): it is a key
// of the ledger's index.
const maxDeliveryIDLen = 128

// ingestTimeout bounds the write a verified delivery causes. It outlives
// the request (a delivery Linear hung up on is still recorded, so its
// retry is a no-op), and it bounds every answer, a 503 included: the
// intake never queues a delivery, it refuses one it has no slot for
// (admit). Shorter, a fresh connection's first insert on a busy machine
// fails deliveries that would have been recorded.
const ingestTimeout = 1500 * time.Millisecond

// handleLinearWebhook answers Linear's webhook deliveries. Every rejection
// happens before anything is written: 413 for an oversized body, 401 for a
// bad signature or a stale (possibly replayed) timestamp, 400 for a body or
// header weft cannot read. A delivery that is verified and read is
// recorded in the ledger with whatever it causes, in one transaction, and
// answered 200, redeliveries included; when that write fails the answer is
// 503, and Linear delivers again later.
func handleLinearWebhook(logger *slog.Logger, tracer trace.Tracer, rec surface.Recorder, secret []byte, up linearapi.Uploads) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		reject := webhook.Rejecter(ctx, w, logger, "linear delivery rejected")
		body, ok := webhook.ReadBody(w, r, reject)
		if !ok {
			return
		}
		// The signature is checked on the raw bytes before anything
		// parses them.
		ev, err := linearapi.VerifyParse(secret, body, r.Header.Get(linearapi.HeaderSignature), time.Now())
		if err != nil {
			if errors.Is(err, linearapi.ErrMalformed) {
				reject(http.StatusBadRequest, "malformed body", err)
				return
			}
			reject(http.StatusUnauthorized, "invalid signature or timestamp", err)
			return
		}
		deliveryID := strings.TrimSpace(r.Header.Get(linearapi.HeaderDelivery))
		if deliveryID == "" || len(deliveryID) > maxDeliveryIDLen {
			reject(http.StatusBadRequest, "missing or invalid "+linearapi.HeaderDelivery+" header", nil)
			return
		}

		meta := ev.Meta()
		d := thread.Inbound{
			DeliveryID: deliveryID, EventKey: clean(ev.IdentityKey()),
			EventType: clean(meta.Type), Action: clean(meta.Action), Payload: body,
		}
		// Made only to log: With formats the attributes at once, and most
		// deliveries log nothing.
		log := func() *slog.Logger {
			return logger.With(slog.String("delivery_id", deliveryID), slog.String("event_type", d.EventType), slog.String("action", d.Action))
		}
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ingestTimeout)
		defer cancel()
		ictx, span := tracer.Start(ictx, "ingest linear "+d.EventType+" "+d.Action)
		defer span.End()
		// The recorder keeps a body jsonb refuses without it, records a
		// signed but unusable delivery as ignored, and takes an input
		// stored already as a redelivery: each is answered 200.
		res, err := rec.Record(ictx, linearEvent(d, ev, up))
		tracing.End(span, err)
		if err != nil {
			log().ErrorContext(ctx, "linear delivery not recorded", slog.Any("error", err))
			webhook.NoteOutcome(ctx, metrics.EventFailed)
			w.Header().Set("Retry-After", "60")
			http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
		if logger.Enabled(ctx, slog.LevelDebug) {
			log().DebugContext(ctx, "linear delivery recorded", slog.Bool("duplicate", res.Duplicate), slog.String("thread_id", res.ThreadID.String()))
		}
		switch {
		case res.Duplicate:
			webhook.NoteOutcome(ctx, metrics.EventDuplicate)
		case res.Ignored:
			webhook.NoteOutcome(ctx, metrics.EventIgnored)
		}
		w.WriteHeader(http.StatusOK)
	})
}

// linearEvent is what a parsed event means, with the images of up in its
// prompts. Events weft does not act on (inbox notifications, entity
// webhooks, permission changes, whose team access weft does not track)
// are recorded as ignored.
func linearEvent(d thread.Inbound, ev linearapi.Event, up linearapi.Uploads) surface.Event {
	switch e := ev.(type) {
	case *linearapi.AgentSessionEvent:
		if e.Action == linearapi.ActionPrompted {
			return Prompted(d, linearSession(e, up), linearPrompt(e, up))
		}
		return Created(d, linearSession(e, up))
	case *linearapi.OAuthAppRevoked:
		return Revoked(d, clean(e.OrganizationID))
	default:
		return Ignored(d)
	}
}

// automationCreator stands in for the creator of a session an automation
// or another agent started: Linear names nobody, and the column needs a value.
const automationCreator = "automation"

// linearSession is the session an agent event describes, in ingest's
// terms. created and prompted events both carry it, so either can make the
// session's thread.
func linearSession(e *linearapi.AgentSessionEvent, up linearapi.Uploads) Session {
	att := thread.LinearAttachment{
		SessionID: e.Session.ID, WorkspaceID: e.OrganizationID,
		IssueID: e.Session.IssueID, CommentID: e.Session.CommentID,
		CreatedByUserID: creatorID(e),
	}
	goal := "Linear agent session " + e.Session.ID
	if in := e.Issue; in != nil {
		att.IssueID, att.IssueIdentifier, att.IssueTitle = in.ID, in.Identifier, in.Title
		att.TeamID, att.ProjectID = in.TeamID, in.ProjectID
		goal = strings.TrimSpace(in.Identifier + ": " + in.Title)
	}
	for _, f := range []*string{&att.SessionID, &att.WorkspaceID, &att.IssueID, &att.IssueIdentifier, &att.IssueTitle,
		&att.TeamID, &att.ProjectID, &att.CommentID, &att.CreatedByUserID} {
		*f = clean(*f)
	}
	// A prompted event's InitialPrompt is the user's message; the
	// session's own prompt is rendered from the payload without it.
	sessionOnly := *e
	sessionOnly.Prompt = nil
	prompt := sessionOnly.InitialPrompt()
	if strings.TrimSpace(prompt) == "" {
		prompt = goal
	}
	s := Session{Attachment: att, Goal: clean(goal), Prompt: clean(prompt)}
	s.Files = up.Files(att.WorkspaceID, s.Prompt)
	if c := e.Creator; c != nil {
		s.Creator = &thread.Author{ID: clean(c.ID), Name: clean(c.Name)}
	}
	// Linear asks agents to move an issue a person delegated to them to
	// started, and to leave one an automation delegated for a human.
	s.StartIssue = e.Creator != nil && delegated(e)
	return s
}

func creatorID(e *linearapi.AgentSessionEvent) string {
	switch {
	case e.Session.CreatorID != "":
		return e.Session.CreatorID
	case e.Creator != nil:
		return e.Creator.ID
	case e.Prompt != nil && e.Prompt.User != nil:
		return e.Prompt.User.ID
	}
	return automationCreator
}

// delegationMarker opens the comment Linear writes to anchor a session
// that a delegation (not a mention) started; nothing else in the payload
// tells the two apart.
const delegationMarker = "This thread is for an agent session"

func delegated(e *linearapi.AgentSessionEvent) bool {
	return e.Comment != nil && strings.HasPrefix(strings.TrimSpace(e.Comment.Body), delegationMarker)
}

func linearPrompt(e *linearapi.AgentSessionEvent, up linearapi.Uploads) Prompt {
	p := Prompt{ActivityID: clean(e.Prompt.ActivityID), Text: clean(e.Prompt.Body), Stop: e.IsStop()}
	p.Files = up.Files(clean(e.OrganizationID), p.Text)
	if u := e.Prompt.User; u != nil {
		p.Author = &thread.Author{ID: clean(u.ID), Name: clean(u.Name)}
	}
	return p
}

// clean removes NUL characters, which JSON may carry (as \u0000) and
// Postgres text cannot store.
func clean(s string) string { return strings.ReplaceAll(s, "\x00", "") }
