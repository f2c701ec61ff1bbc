package discord

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
)

// Interactions serves Discord's HTTP interactions: PING and weft's
// slash commands, /continue, /weft status and /weft stop.
type Interactions struct {
	// PublicKey is the application's Ed25519 key (DISCORD_PUBLIC_KEY).
	PublicKey ed25519.PublicKey
	// Window is how old (or early) a signed timestamp may be; 0 means
	// discordapi.DefaultInteractionWindow.
	Window time.Duration
	// AllowedGuilds, when set, is the only guilds whose commands run; the
	// rest (and DMs) are answered with a refusal.
	AllowedGuilds []string
	Threads       DiscordThreads
	// Elsewhere are the other platforms /weft status lists a thread on,
	// in order (surface.Describing).
	Elsewhere []Describer
	Continue  DiscordContinuer
	Responses InteractionResponder
	// CommandTimeout bounds a deferred command's work; 0 means one minute.
	CommandTimeout time.Duration
	// Aborter stops a thread for /weft stop.
	Aborter Aborter
	// Approvals decides requests for approval from their buttons; nil
	// answers a click that nothing can decide it here.
	Approvals surface.Approvals
}

// Aborter stops a thread, confirming it with text; false for a thread
// that had finished. *ingest.Ingester is one.
type Aborter interface {
	Abort(ctx context.Context, threadID uuid.UUID, text string) (bool, error)
}

// Routes mounts POST /webhooks/discord, counted.
func (d *Interactions) Routes(r chi.Router, m surface.Mount) {
	r.With(m.Count(thread.PlatformDiscord)).Method(http.MethodPost, "/webhooks/discord", handleDiscordInteraction(m.Logger, m.Recorder, d))
}

// DiscordThreads reads what /weft status shows. *db.Store implements it.
type DiscordThreads interface {
	ThreadByDiscordThread(ctx context.Context, discordThreadID string) (*thread.Thread, error)
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// Describer names where a thread is attached on another platform, or
// fails (thread.ErrNotFound) when it is not. Every surface.Describing is one.
type Describer interface {
	Describe(ctx context.Context, threadID uuid.UUID) (string, error)
}

// DiscordContinuer continues the conversation ref names (on whichever
// platform knows it) in a new Discord thread and returns its link;
// existing says it was in Discord already.
type DiscordContinuer interface {
	ContinueRef(ctx context.Context, ref, channelID, guildID, by string) (url string, existing bool, err error)
	// Elsewhere names the platforms whose conversations it finds, for the
	// reply when it finds none, as people write them ("X or Y").
	Elsewhere() string
}

// InteractionResponder edits a deferred interaction response.
// *discordapi.Client implements it.
type InteractionResponder interface {
	EditInteractionResponse(ctx context.Context, appID, token, content string) error
}

// defaultCommandTimeout bounds a deferred command. Discord keeps the
// interaction token for 15 minutes; a user waiting on "thinking…" should
// hear back far sooner.
const defaultCommandTimeout = time.Minute

// handleDiscordInteraction answers Discord's interactions. Every
// rejection happens before anything is written: 413 for an oversized body,
// 401 for a bad signature, a stale timestamp or a replay (an interaction
// already recorded: Discord never sends one twice), 400 for a body weft
// cannot read. PING is answered PONG; /weft status inline; /continue,
// which opens a Discord thread and posts in two places, is deferred at
// once and its result edited into the response when done.
func handleDiscordInteraction(logger *slog.Logger, rec surface.Recorder, d *Interactions) http.Handler {
	window := d.Window
	if window <= 0 {
		window = discordapi.DefaultInteractionWindow
	}
	timeout := d.CommandTimeout
	if timeout <= 0 {
		timeout = defaultCommandTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		reject := webhook.Rejecter(ctx, w, logger, "discord interaction rejected")
		body, ok := webhook.ReadVerified(w, r, reject, "invalid request signature", func(body []byte) error {
			sig := r.Header.Get("X-Signature-Ed25519")
			return discordapi.VerifyInteraction(d.PublicKey, sig, r.Header.Get("X-Signature-Timestamp"), body, time.Now(), window)
		})
		if !ok {
			return
		}
		in, err := discordapi.ParseInteraction(body)
		if err != nil {
			reject(http.StatusBadRequest, "malformed body", err)
			return
		}
		if in.Kind == discordapi.InteractionPing {
			writeInteraction(w, discordapi.PongResponse())
			return
		}
		// Discord never redelivers an interaction: one seen before is a
		// replay.
		res, err := rec.Record(ctx, surface.Event{Kind: surface.Command,
			Inbound: inbound(interactionKey(in), eventInteraction, interactionAction(in.Kind))})
		fresh := !res.Duplicate
		if err != nil {
			logger.ErrorContext(ctx, "discord interaction not recorded", slog.Any("error", err))
			webhook.NoteOutcome(ctx, metrics.EventFailed)
			http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
		if !fresh {
			reject(http.StatusUnauthorized, "interaction replayed", nil)
			return
		}
		log := logger.With(slog.String("interaction_id", in.ID), slog.String("guild_id", in.GuildID), slog.String("channel_id", in.ChannelID))
		switch {
		case len(d.AllowedGuilds) > 0 && !slices.Contains(d.AllowedGuilds, in.GuildID):
			writeInteraction(w, discordapi.MessageResponse("weft is not enabled in this server.", true))
		case in.Kind == discordapi.InteractionStatus:
			writeInteraction(w, discordapi.MessageResponse(discordStatus(ctx, log, d.Threads, d.Elsewhere, in.ChannelID), true))
		case in.Kind == discordapi.InteractionStop:
			writeInteraction(w, discordapi.MessageResponse(discordStop(ctx, log, d.Threads, d.Aborter, in), true))
		case in.Kind == discordapi.InteractionApproval:
			body, err := decideApproval(ctx, log, d.Approvals, in)
			if err != nil {
				// Acknowledged only once stored: the click fails visibly
				// and can be made again.
				log.ErrorContext(ctx, "discord approval not decided", slog.Any("error", err))
				http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
				return
			}
			writeInteraction(w, body)
		case in.Kind == discordapi.InteractionContinue:
			writeInteraction(w, discordapi.DeferredResponse(false))
			// The deferral is answered; the work goes on past the request.
			go runContinue(context.WithoutCancel(ctx), log, d, in, timeout)
		default:
			writeInteraction(w, discordapi.MessageResponse("Unknown command.", true))
		}
	})
}

// decideApproval decides the request an Approve or Deny button is for, as
// the person who clicked: the message loses its buttons and says who
// decided; a request decided before, a person not among the approvers or
// an unknown request is told so, only to the one who clicked, and nothing
// changes. An error means the decision could not be stored.
func decideApproval(ctx context.Context, log *slog.Logger, ap surface.Approvals, in discordapi.Interaction) ([]byte, error) {
	id, err := uuid.Parse(in.ApprovalID)
	if ap == nil || err != nil {
		return discordapi.MessageResponse("I cannot find this request for approval.", true), nil
	}
	a, err := ap.DecideOnPlatform(ctx, surface.ApprovalDecision{ApprovalID: id, Decision: thread.Decision(in.Decision),
		User: thread.Author{ID: in.User.ID, Name: in.User.Name}, Platform: thread.PlatformDiscord})
	var decided *thread.DecidedError
	switch {
	case errors.As(err, &decided):
		return discordapi.MessageResponse("This request was "+decided.Error()+".", true), nil
	case errors.Is(err, thread.ErrNotApprover):
		return discordapi.MessageResponse("You are not among the people who may approve tool calls here.", true), nil
	case errors.Is(err, thread.ErrNotFound):
		return discordapi.MessageResponse("I cannot find this request for approval.", true), nil
	case err != nil:
		return nil, err
	}
	log.InfoContext(ctx, "approval decided in discord", slog.String("approval_id", a.ID.String()),
		slog.String("decision", in.Decision), slog.String("user_id", in.User.ID))
	return discordapi.UpdateMessageResponse(withDecision(in.MessageContent, a)), nil
}

// withDecision is a request's text with the line saying who decided (and
// where, when not in Discord), cut to fit one message.
func withDecision(text string, a *thread.Approval) string {
	mark := "✅ **Approved**"
	if a.Status == thread.ApprovalDenied {
		mark = "🚫 **Denied**"
	}
	line := fmt.Sprintf("%s by %s", mark, a.Decider())
	if a.DecidedVia != "" && a.DecidedVia != string(thread.PlatformDiscord) {
		line += " (" + a.DecidedVia + ")"
	}
	if r := []rune(text); len(r) > discordapi.MessageLimit-len([]rune(line))-2 {
		text = string(r[:discordapi.MessageLimit-len([]rune(line))-3]) + "…"
	}
	return strings.TrimSpace(text + "\n\n" + line)
}

// runContinue does /continue's work and edits the deferred response with
// the outcome. A replica that dies meanwhile leaves the user a response
// Discord marks as failed; the command can simply be run again.
func runContinue(ctx context.Context, log *slog.Logger, d *Interactions, in discordapi.Interaction, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url, existing, err := d.Continue.ContinueRef(ctx, in.Target, in.ChannelID, in.GuildID, in.User.ID)
	var text string
	var refused *thread.Error
	switch {
	case errors.Is(err, thread.ErrNotFound):
		text = fmt.Sprintf("I found no %s conversation for %q.", d.Continue.Elsewhere(), in.Target)
	case errors.As(err, &refused) && errors.Is(err, thread.ErrInvalid):
		// Said to the person who asked: another organisation's channel, or
		// no channel configured. Not weft's failure, so not logged as one.
		text = "I cannot continue that conversation here: " + refused.Msg
	case err != nil:
		log.ErrorContext(ctx, "discord /continue failed", slog.Any("error", err))
		text = "Sorry, I could not continue that conversation here."
	case existing:
		text = "That conversation already continues in Discord: " + url
	default:
		text = "Continuing the conversation here: " + url
	}
	if err := d.Responses.EditInteractionResponse(ctx, in.ApplicationID, in.Token, text); err != nil {
		log.WarnContext(ctx, "discord interaction response not edited", slog.Any("error", err))
	}
}

// discordStatus is /weft status: the weft thread of the Discord thread the
// command was used in, its status and its platforms.
func discordStatus(ctx context.Context, log *slog.Logger, threads DiscordThreads, elsewhere []Describer, channelID string) string {
	th, err := threads.ThreadByDiscordThread(ctx, channelID)
	if errors.Is(err, thread.ErrNotFound) {
		return "This channel is not a weft conversation. Mention me in a channel to start one."
	}
	if err != nil {
		log.ErrorContext(ctx, "discord /weft status failed", slog.Any("error", err))
		return "Sorry, I could not read this conversation's status."
	}
	status := string(th.Status)
	if th.WaitingReason != "" {
		status += " (" + string(th.WaitingReason) + ")"
	}
	platforms := []string{"Discord"}
	if att, err := threads.DiscordAttachment(ctx, th.ID); err == nil && !att.Active {
		platforms[0] = "Discord (inactive)"
	}
	for _, e := range elsewhere {
		if line, err := e.Describe(ctx, th.ID); err == nil {
			platforms = append(platforms, line)
		}
	}
	return fmt.Sprintf("**%s**\nweft thread `%s`: %s, %d steps.\nPlatforms: %s.",
		strings.Join(strings.Fields(th.Goal), " "), th.ID, status, th.StitchCount, strings.Join(platforms, ", "))
}

// discordStop is /weft stop: the weft thread of the Discord thread the
// command was used in is stopped through the ingester's Abort, as the
// API's abort does; the stop is confirmed in the thread.
func discordStop(ctx context.Context, log *slog.Logger, threads DiscordThreads, ab Aborter, in discordapi.Interaction) string {
	th, err := threads.ThreadByDiscordThread(ctx, in.ChannelID)
	if errors.Is(err, thread.ErrNotFound) {
		return "This channel is not a weft conversation: use /weft stop in the thread to stop."
	}
	var aborted bool
	if err == nil {
		aborted, err = ab.Abort(ctx, th.ID, "Stopped from Discord by "+in.User.Name+".")
	}
	if err != nil {
		log.ErrorContext(ctx, "discord /weft stop failed", slog.Any("error", err))
		return "Sorry, I could not stop this conversation. Please try again."
	}
	if !aborted {
		return "This conversation had already finished: there was nothing to stop."
	}
	log.InfoContext(ctx, "discord thread stopped", slog.String("thread_id", th.ID.String()), slog.String("user_id", in.User.ID))
	return "Stopped. I will not continue this conversation."
}

// interactionKey is an interaction's ledger key: its id with a digest of
// its token, unique per interaction. The token itself is a credential for
// 15 minutes and is not stored.
func interactionKey(in discordapi.Interaction) string {
	sum := sha256.Sum256([]byte(in.Token))
	return clean(in.ID) + ":" + hex.EncodeToString(sum[:8])
}

func interactionAction(k discordapi.InteractionKind) string {
	switch k {
	case discordapi.InteractionContinue:
		return "continue"
	case discordapi.InteractionStatus:
		return "status"
	case discordapi.InteractionStop:
		return "stop"
	case discordapi.InteractionApproval:
		return "approval"
	}
	return "unknown"
}

// writeInteraction answers with an interaction response body.
func writeInteraction(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// clean removes NUL characters, which JSON may carry (as \u0000) and
// Postgres text cannot store.
func clean(s string) string { return strings.ReplaceAll(s, "\x00", "") }
