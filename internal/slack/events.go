package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	goslack "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/weft-dev/weft/internal/thread"
)

// ErrMalformed marks an Events API body that is not a Slack event envelope.
var ErrMalformed = errors.New("slack: malformed event")

// Recorder is weft's ingest path, in the domain's terms: what Slack events
// become. *ingest.Ingester implements it; this package may not import
// ingest.
type Recorder interface {
	// SlackEvent records a delivery (once per event id) and what it means,
	// in one transaction; false means it was recorded before.
	SlackEvent(ctx context.Context, e Event) (bool, error)
}

// Conversations turns Slack event envelopes, from the Events API or Socket
// Mode, into Recorder calls: a mention or a direct message opens a weft
// thread on its Slack thread, later messages there are its stitches, edits
// and deletes update them. weft's own messages are left out, and other
// bots' are stored but answered only when they mention weft.
type Conversations struct {
	bots    Bots
	names   Names // nil: authors by id
	rec     Recorder
	logger  *slog.Logger
	allowed func(teamID string) bool
	revoker Revoker
	// greeter offers suggested prompts when a person opens a
	// conversation with the app (WithGreeter); nil offers none.
	greeter *Greeter
}

// ConversationsOption configures Conversations.
type ConversationsOption func(*Conversations)

// WithAllowedTeams records only the events of workspaces allowed accepts
// (SLACK_ALLOWED_TEAMS); the others are acknowledged, so that Slack does
// not send them again, and dropped. nil accepts every workspace.
func WithAllowedTeams(allowed func(teamID string) bool) ConversationsOption {
	return func(c *Conversations) { c.allowed = allowed }
}

// Revoker forgets a workspace's installation once Slack says the app was
// uninstalled or its bot token revoked; repeating it is harmless.
// The Slack seam's *Installations is one.
type Revoker interface {
	Revoke(ctx context.Context, teamID string) error
}

// WithRevoker has app_uninstalled and tokens_revoked (of the bot's token)
// revoke the workspace's installation through r, so that its token is no
// longer used.
func WithRevoker(r Revoker) ConversationsOption {
	return func(c *Conversations) { c.revoker = r }
}

// Bots tells who weft's bot is in a workspace; an error wrapping
// ErrNotInstalled means weft has no token there. *Workspaces is one.
type Bots interface {
	Identity(ctx context.Context, teamID string) (Identity, error)
}

// Names tells a person's name in a workspace, the id when it cannot.
// *Workspaces is one.
type Names interface {
	UserName(ctx context.Context, teamID, userID string) string
}

// NewConversations returns Conversations recording through rec; bots tells
// it who the bot is in each workspace, and, when it is Names too, what
// people are called, so that messages are stored under their authors'
// names.
func NewConversations(bots Bots, rec Recorder, logger *slog.Logger, opts ...ConversationsOption) *Conversations {
	c := &Conversations{bots: bots, rec: rec, logger: logger.With("component", "slack_conversations")}
	c.names, _ = bots.(Names)
	for _, o := range opts {
		o(c)
	}
	return c
}

// envelope is the outer Events API body, read by hand so that an inner
// event type slack-go does not know is still acknowledged and recorded.
type envelope struct {
	Type      string          `json:"type"`
	Challenge string          `json:"challenge"`
	TeamID    string          `json:"team_id"`
	EventID   string          `json:"event_id"`
	EventTime int64           `json:"event_time"`
	Event     json.RawMessage `json:"event"`
}

type innerHead struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
}

// Handle records one verified Events API body and returns the challenge of
// a url_verification (empty otherwise). A body that is not an envelope, or
// an event_callback without its ids, fails with ErrMalformed and writes
// nothing; so does, without failing, an event of a workspace not allowed
// or one weft has no token for (neither installed nor SLACK_BOT_TOKEN's).
// Any other failure means nothing was recorded, for Slack to retry.
func (c *Conversations) Handle(ctx context.Context, body []byte) (challenge string, err error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	switch env.Type {
	case slackevents.URLVerification:
		if env.Challenge == "" {
			return "", fmt.Errorf("%w: url_verification without a challenge", ErrMalformed)
		}
		return env.Challenge, nil
	case slackevents.AppRateLimited:
		c.logger.WarnContext(ctx, "slack rate-limited this app's events", slog.String("team_id", env.TeamID))
		return "", nil
	case slackevents.CallbackEvent:
	default:
		return "", fmt.Errorf("%w: envelope type %q", ErrMalformed, env.Type)
	}
	var head innerHead
	if env.EventID == "" || env.TeamID == "" || len(env.Event) == 0 || json.Unmarshal(env.Event, &head) != nil || head.Type == "" {
		return "", fmt.Errorf("%w: event_callback without event_id, team_id or event", ErrMalformed)
	}
	if c.allowed != nil && !c.allowed(env.TeamID) {
		c.logger.InfoContext(ctx, "slack event from a workspace not allowed", slog.String("team_id", env.TeamID), slog.String("event_id", env.EventID))
		return "", nil
	}
	if head.Type == "app_uninstalled" || head.Type == "tokens_revoked" {
		// Before asking who the bot is: its token is already dead.
		return "", c.revoked(ctx, env, head)
	}
	bot, err := c.bots.Identity(ctx, env.TeamID)
	if errors.Is(err, ErrNotInstalled) {
		// Without a token weft could not answer there: acknowledged, so
		// Slack does not send it again, and dropped.
		c.logger.WarnContext(ctx, "slack event from a workspace weft is not installed in",
			slog.String("team_id", env.TeamID), slog.String("event_id", env.EventID), slog.String("type", head.Type))
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("slack: who am i in %s: %w", env.TeamID, err)
	}
	e, err := c.event(env, head, bot)
	if err != nil {
		return "", err
	}
	if a := e.Message.Author; e.Action == ActionMessage && a != nil && !a.Bot && c.names != nil {
		a.Name = c.names.UserName(ctx, env.TeamID, a.ID)
	}
	fresh, err := c.rec.SlackEvent(ctx, e)
	if err != nil {
		return "", err
	}
	if fresh && c.greeter != nil {
		c.greeter.greet(ctx, env, head)
	}
	return "", nil
}

// revoked handles app_uninstalled and tokens_revoked: the installation is
// revoked when the bot's token went, then the event is recorded. Revoking
// first and again on a redelivery is harmless, so a failure to record
// leaves Slack's retry to finish the job.
func (c *Conversations) revoked(ctx context.Context, env envelope, head innerHead) error {
	bot := head.Type == "app_uninstalled"
	if !bot {
		var ev struct {
			Tokens struct {
				Bot []string `json:"bot"`
			} `json:"tokens"`
		}
		if err := json.Unmarshal(env.Event, &ev); err != nil {
			return fmt.Errorf("%w: tokens_revoked: %w", ErrMalformed, err)
		}
		bot = len(ev.Tokens.Bot) > 0
	}
	if bot && c.revoker != nil {
		if err := c.revoker.Revoke(ctx, env.TeamID); err != nil {
			return fmt.Errorf("slack: revoke %s: %w", env.TeamID, err)
		}
		c.logger.InfoContext(ctx, "slack installation revoked", slog.String("team_id", env.TeamID), slog.String("event", head.Type))
	}
	_, err := c.rec.SlackEvent(ctx, Event{EventID: env.EventID, EventType: head.Type, Action: ActionIgnore,
		At: time.Unix(env.EventTime, 0)})
	return err
}

// event is what an inner event means for weft.
func (c *Conversations) event(env envelope, head innerHead, bot Identity) (Event, error) {
	e := Event{EventID: env.EventID, EventType: head.Type, Action: ActionIgnore, At: time.Unix(env.EventTime, 0)}
	if head.Subtype != "" {
		e.EventType += "." + head.Subtype
	}
	switch head.Type {
	case "app_mention", "message":
	default:
		return e, nil // assistant_thread_started and the rest: recorded only
	}
	if head.Type == "app_mention" {
		var m slackevents.AppMentionEvent
		if err := json.Unmarshal(env.Event, &m); err != nil {
			return e, fmt.Errorf("%w: app_mention: %w", ErrMalformed, err)
		}
		return c.message(e, bot, env.TeamID, msg{channel: m.Channel, user: m.User, botID: m.BotID, text: m.Text, ts: m.TimeStamp, threadTS: m.ThreadTimeStamp, files: m.Files}, true), nil
	}
	var m slackevents.MessageEvent
	if err := json.Unmarshal(env.Event, &m); err != nil {
		return e, fmt.Errorf("%w: message: %w", ErrMalformed, err)
	}
	switch m.SubType {
	case "", "thread_broadcast", "file_share", "bot_message", "me_message":
		in := msg{channel: m.Channel, channelType: m.ChannelType, user: m.User, botID: m.BotID, text: m.Text, ts: m.TimeStamp, threadTS: m.ThreadTimeStamp}
		if m.Message != nil {
			in.files = m.Message.Files
		}
		return c.message(e, bot, env.TeamID, in, strings.Contains(m.Text, "<@"+bot.UserID+">")), nil
	case "message_changed":
		if m.Message == nil || m.Message.Timestamp == "" || m.Message.SubType == "assistant_app_thread" {
			return e, nil
		}
		e.Action = ActionEdit
		e.Message = thread.Stitch{ExternalID: thread.SlackMessageID(env.TeamID, m.Channel, m.Message.Timestamp), Content: fromMrkdwn(m.Message.Text, bot.UserID)}
		if m.Message.Edited != nil {
			if at := ParseTS(m.Message.Edited.Timestamp); !at.IsZero() {
				e.At = at
			}
		}
	case "message_deleted":
		if m.DeletedTimeStamp == "" {
			return e, nil
		}
		e.Action = ActionDelete
		e.Message = thread.Stitch{ExternalID: thread.SlackMessageID(env.TeamID, m.Channel, m.DeletedTimeStamp)}
	}
	return e, nil
}

// msg is what weft reads of an app_mention or a message.
type msg struct {
	channel, channelType, user, botID, text, ts, threadTS string
	files                                                 []goslack.File
}

// goalLimit bounds a new thread's goal, taken from its first message.
const goalLimit = 100

// message fills e for a person's or a bot's message: stored in its thread
// if weft tracks it, opening it if it mentions weft or is a direct message.
func (c *Conversations) message(e Event, bot Identity, team string, m msg, mentioned bool) Event {
	if m.ts == "" || m.channel == "" || m.user == "" && m.botID == "" {
		return e
	}
	if m.user == bot.UserID || m.botID != "" && m.botID == bot.BotID {
		return e // weft's own post, which it never answers
	}
	typ := m.channelType
	if typ == "" {
		typ = thread.SlackChannelType(m.channel)
	}
	threadTS := m.threadTS
	dm := typ == "im"
	if threadTS == "" {
		if !mentioned && !dm {
			return e // top-level chatter weft was not asked into
		}
		threadTS = m.ts // a top-level mention starts the thread
	}
	isBot := m.botID != ""
	author := m.user
	if author == "" {
		author = m.botID
	}
	text := fromMrkdwn(m.text, bot.UserID)
	e.Action = ActionMessage
	e.Thread = thread.SlackAttachment{TeamID: team, ChannelID: m.channel, ThreadTS: threadTS, ChannelType: typ, CreatedBy: author}
	e.Message = thread.Stitch{Content: text, ExternalID: thread.SlackMessageID(team, m.channel, m.ts),
		Author: &thread.Author{ID: author, Name: author, Bot: isBot}}
	if files := filesOf(team, m.files); len(files) > 0 {
		e.Message.Metadata = thread.Meta{Files: files}.JSON()
	}
	e.Answer = !isBot || mentioned
	e.Open = e.Answer && (mentioned || dm)
	e.Goal = goal(text)
	if e.At = ParseTS(m.ts); e.At.IsZero() {
		e.At = time.Now()
	}
	return e
}

// filesOf is what weft keeps of a message's files: where to fetch each
// (url_private, with the team's bot token), its name, type and size.
func filesOf(team string, fs []goslack.File) []thread.File {
	var out []thread.File
	for _, f := range fs {
		name := f.Name
		if name == "" {
			name = f.Title
		}
		out = append(out, thread.File{Name: name, MediaType: f.Mimetype, Size: int64(f.Size), URL: f.URLPrivate, Workspace: team})
	}
	return out
}

// goal is a new thread's goal from its first message.
func goal(text string) string {
	g := strings.Join(strings.Fields(text), " ")
	if r := []rune(g); len(r) > goalLimit {
		g = string(r[:goalLimit-1]) + "…"
	}
	if g == "" {
		g = "Slack conversation"
	}
	return g
}

// fromMrkdwn is a message's text as the model reads it: the bot's own
// mention removed and Slack's three escaped characters restored.
func fromMrkdwn(text, botUserID string) string {
	if botUserID != "" {
		text = strings.ReplaceAll(text, "<@"+botUserID+">", "")
	}
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(text)
}
