package github

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/db"
	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
)

// ingestTimeout bounds the writes a verified delivery causes; it outlives
// the request, so a delivery GitHub hung up on is still recorded and its
// redelivery is a no-op. GitHub waits 10 s.
const ingestTimeout = 1500 * time.Millisecond

// Door answers GitHub's webhook deliveries. Every rejection happens
// before anything is written: 413 for a body over GitHub's 25 MB, 401 for
// a forged signature, 400 for a body or headers weft cannot read. A
// genuine delivery too large to parse (githubapi.MaxParsed) is recorded as
// ignored. A verified
// delivery is recorded in the ledger, by its X-GitHub-Delivery, with what
// it causes in one transaction, and answered 200, a redelivery included
// (recorded before, it changes nothing); when that write fails, 503.
type Door struct {
	Client   *githubapi.Client
	Recorder surface.Recorder
	// Installations keeps the installations' state; nil keeps none.
	Installations Installations
	Logger        *slog.Logger
	// Seen hears of each verified delivery before it is recorded, to
	// drop what caches keep of what it changes; nil hears nothing.
	Seen func(githubapi.Event)
}

func (d Door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	reject := webhook.Rejecter(ctx, w, d.Logger, "github delivery rejected")
	signed, ok := ctx.Value(signedKey{}).(githubapi.Signed)
	if !ok {
		if signed, ok = d.Client.ReadDelivery(w, r, reject); !ok {
			return
		}
	}
	gev, err := d.Client.ParseDelivery(r, signed)
	if err != nil {
		reject(http.StatusBadRequest, "malformed delivery", err)
		return
	}
	if gev.Oversized {
		d.Logger.InfoContext(ctx, "github delivery too large to act on, ignored", slog.String("delivery_id", gev.Delivery),
			slog.String("event_type", gev.Name))
	}
	if d.Seen != nil {
		d.Seen(gev)
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ingestTimeout)
	defer cancel()
	ev, err := d.event(ictx, gev)
	if err == nil {
		var res surface.Recorded
		if res, err = d.Recorder.Record(ictx, ev); err == nil {
			switch {
			case res.Duplicate:
				webhook.NoteOutcome(ctx, metrics.EventDuplicate)
			case res.Ignored:
				webhook.NoteOutcome(ctx, metrics.EventIgnored)
			}
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	d.Logger.ErrorContext(ctx, "github delivery not recorded", slog.String("delivery_id", gev.Delivery),
		slog.String("event_type", gev.Name), slog.String("action", gev.Action), slog.Any("error", err))
	webhook.NoteOutcome(ctx, metrics.EventFailed)
	w.Header().Set("Retry-After", "60")
	http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
}

// signedKey holds the githubapi.Signed body readFirst read.
type signedKey struct{}

// readFirst reads and verifies a delivery's body before next runs (as
// webhook.BufferBody does for the other doors, within GitHub's bounds),
// handing it on in the request's context.
func readFirst(c *githubapi.Client, logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			s, ok := c.ReadDelivery(w, r, webhook.Rejecter(ctx, w, logger, "github delivery rejected"))
			if !ok {
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, signedKey{}, s)))
		})
	}
}

// event is what a delivery means, after the installation's own state is
// kept: an uninstalled or suspended installation's deliveries are
// recorded as ignored.
func (d Door) event(ctx context.Context, e githubapi.Event) (surface.Event, error) {
	in := thread.Inbound{Platform: thread.PlatformGitHub, DeliveryID: clean(e.Delivery), EventType: clean(e.Name), Action: clean(e.Action)}
	ignored := surface.Event{Kind: surface.Ignore, Inbound: in}
	if d.Installations != nil && e.Installation != 0 {
		switch e.Intent {
		case githubapi.IntentInstalled:
			return ignored, d.Installations.UpsertGitHubInstallation(ctx,
				db.GitHubInstallation{ID: e.Installation, AccountID: e.Account.ID, AccountLogin: clean(e.Account.Login)})
		case githubapi.IntentSuspended, githubapi.IntentUnsuspended:
			return ignored, d.Installations.SetGitHubInstallationSuspended(ctx, e.Installation, e.Intent == githubapi.IntentSuspended)
		case githubapi.IntentUninstalled:
		default:
			gone, err := d.Installations.GitHubInstallationGone(ctx, e.Installation)
			if err != nil || gone {
				return ignored, err
			}
		}
	}
	ev := Event(in, e)
	if (ev.Kind == surface.Edit || ev.Kind == surface.Delete) && ev.At.IsZero() {
		// A deletion's payload carries no time of its own: it happened
		// about now.
		ev.At = time.Now()
	}
	return ev, nil
}

// Event maps a parsed delivery, its ledger entry in, to a surface event:
// a mention opens (or continues) the conversation of its issue, pull
// request or review thread, acknowledged by 👀 and answered; another
// comment there is kept, unanswered; edits and deletions follow their
// comment; an issue assigned to the app, or opened mentioning it, is
// delegated; an uninstall revokes the account. Everything else, the app's
// own comments included, is recorded as ignored.
func Event(in thread.Inbound, e githubapi.Event) surface.Event {
	ev := surface.Event{Kind: surface.Ignore, Inbound: in}
	switch e.Intent {
	case githubapi.IntentUninstalled:
		ev.Kind, ev.Tenant = surface.Revoke, thread.GitHubTenant(e.Account.ID)
		return ev
	case githubapi.IntentMention, githubapi.IntentComment, githubapi.IntentEdited, githubapi.IntentDeleted, githubapi.IntentDelegated:
	default:
		return ev
	}
	if e.Issue == nil || e.Installation == 0 || e.Repo.ID == 0 || e.FromApp {
		return ev
	}
	att := attachment(e)
	if e.Intent == githubapi.IntentDelegated {
		return delegation(in, e, att)
	}
	if e.Comment == nil {
		return ev
	}
	msg := commentStitch(e.Comment)
	switch e.Intent {
	case githubapi.IntentMention:
		prompt := msg
		prompt.Type = thread.StitchInitialPrompt
		ev.Kind, ev.Conversation, ev.Goal, ev.Prompt = surface.Open, att, goal(e), prompt
		ev.Messages, ev.Answer = []thread.Stitch{msg}, true
		ev.Inbound.EventKey = "comment:" + msg.ExternalID
		ev.Ack = &thread.Outbox{Platform: thread.PlatformGitHub, Target: att.Target(), Kind: thread.OutboxThought,
			Body: thread.OutboxBody{Action: AckAction, Parameter: msg.ExternalID}.JSON()}
	case githubapi.IntentComment:
		ev.Kind, ev.Conversation, ev.Messages = surface.Message, att, []thread.Stitch{msg}
		ev.Inbound.EventKey = "comment:" + msg.ExternalID
	case githubapi.IntentEdited:
		ev.Kind, ev.Messages, ev.At = surface.Edit, []thread.Stitch{msg}, e.Comment.UpdatedAt
	case githubapi.IntentDeleted:
		ev.Kind, ev.Messages = surface.Delete, []thread.Stitch{msg}
	}
	return ev
}

// delegation opens the issue's conversation for the agent to work, as any
// delegation to the agent is worked, acknowledged by 👀 on the issue.
func delegation(in thread.Inbound, e githubapi.Event, att *thread.GitHubAttachment) surface.Event {
	is := e.Issue
	key := "delegated:" + att.Conversation()
	prompt := thread.Stitch{Type: thread.StitchInitialPrompt, Source: thread.PlatformGitHub,
		Content: clean(strings.TrimSpace("You were delegated " + e.Repo.FullName() + "#" + strconv.Itoa(is.Number) +
			": " + is.Title + "\n\n" + is.Body)),
		ExternalID: key + ":" + in.DeliveryID, Author: author(e.Sender)}
	in.EventKey = key + ":" + in.Action
	att.CreatedBy = clean(e.Sender.Login)
	return surface.Event{Kind: surface.Open, Inbound: in, Conversation: att, Goal: goal(e), Prompt: prompt, Answer: true,
		Messages: []thread.Stitch{prompt},
		Ack: &thread.Outbox{Platform: thread.PlatformGitHub, Target: att.Target(), Kind: thread.OutboxThought,
			Body: thread.OutboxBody{Action: AckAction}.JSON()}}
}

// attachment is the conversation e is in: its issue or pull request, or
// the review thread of a review comment.
func attachment(e githubapi.Event) *thread.GitHubAttachment {
	att := &thread.GitHubAttachment{InstallationID: e.Installation, AccountID: e.Repo.OwnerID, RepoID: e.Repo.ID,
		Owner: clean(e.Repo.Owner), Repo: clean(e.Repo.Name), Number: e.Issue.Number, PullRequest: e.Issue.PullRequest,
		CreatedBy: clean(e.Sender.Login)}
	if c := e.Comment; c != nil {
		att.CreatedBy = clean(c.Author.Login)
		if c.Review {
			att.ReviewRoot, att.PullRequest = c.ThreadRoot(), true
		}
	}
	if att.CreatedBy == "" {
		att.CreatedBy = "github"
	}
	return att
}

func goal(e githubapi.Event) string {
	kind := "issue"
	if e.Issue.PullRequest {
		kind = "pull request"
	}
	return clean(e.Repo.FullName() + "#" + strconv.Itoa(e.Issue.Number) + " (" + kind + "): " + e.Issue.Title)
}

func commentStitch(c *githubapi.Comment) thread.Stitch {
	return thread.Stitch{Type: thread.StitchGitHubMessage, Source: thread.PlatformGitHub, Content: clean(c.Body),
		ExternalID: thread.GitHubCommentID(c.Review, c.ID), Author: author(c.Author)}
}

func author(u githubapi.User) *thread.Author {
	if u.Login == "" {
		return nil
	}
	return &thread.Author{ID: strconv.FormatInt(u.ID, 10), Name: clean(u.Login), Bot: u.Type == "Bot"}
}

// clean removes NUL characters, which JSON may carry and Postgres text
// cannot store.
func clean(s string) string { return strings.ReplaceAll(s, "\x00", "") }
