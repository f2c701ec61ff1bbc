package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/toolschema"
)

// DiscordThreads opens Discord threads. *discord.Client implements it.
type DiscordThreads interface {
	// OpenThread opens a public thread in a channel (a thread's channel,
	// given a thread) and returns its id and its guild's.
	OpenThread(ctx context.Context, channelID, name string) (threadID, guildID string, err error)
	// ChannelGuild returns the server a channel is in.
	ChannelGuild(ctx context.Context, channelID string) (string, error)
}

// ContinueRecorder attaches a thread to a Discord thread and queues the
// announcements, atomically. *ingest.Ingester implements it.
type ContinueRecorder interface {
	ContinueInDiscord(ctx context.Context, att thread.DiscordAttachment, summary, linearText, url string) error
}

// ContinueStore reads what continuing needs. *db.Store implements it.
type ContinueStore interface {
	Organisations
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	ThreadByLinearRef(ctx context.Context, ref, organisation string) (*thread.Thread, error)
	Stitches(ctx context.Context, threadID uuid.UUID, p db.StitchPage) ([]thread.Stitch, error)
	DiscordAttachment(ctx context.Context, threadID uuid.UUID) (*thread.DiscordAttachment, error)
}

// ErrNoContinueChannel: neither DISCORD_CONTINUE_CHANNEL_ID nor the
// caller names a channel to open the thread in.
var ErrNoContinueChannel = &thread.Error{Kind: thread.ErrInvalid, Msg: "no Discord channel to continue in: set DISCORD_CONTINUE_CHANNEL_ID"}

// ErrContinueOtherOrganisation refuses to continue a conversation in a
// server of another organisation: link them with `weft tenant link` first.
var ErrContinueOtherOrganisation = &thread.Error{Kind: thread.ErrInvalid,
	Msg: "the Discord channel to continue in is in another organisation than this conversation: link them with `weft tenant link`"}

// Continuer continues a conversation in Discord: it opens a Discord thread,
// attaches it to the same weft thread, posts a summary of the conversation
// there and links it back in the thread's Linear session. Messages in the
// Discord thread then continue the weft thread with its whole history, and
// each answer goes where its question was asked. The continue_in_discord
// tool and the /continue command both use it.
type Continuer struct {
	Store    ContinueStore
	Discord  DiscordThreads
	Recorder ContinueRecorder
	// ChannelID is where threads open (DISCORD_CONTINUE_CHANNEL_ID); empty
	// means the channel the caller names.
	ChannelID string
}

// Continued is where a conversation continues.
type Continued struct {
	ThreadID uuid.UUID
	URL      string
	// Existing reports that the thread was in Discord already: nothing new
	// was opened.
	Existing bool
}

// ContinueLinear continues the thread of the Linear session ref names (an
// issue key like ENG-123, an issue or session id, or a Linear URL holding
// one), in channelID unless a continue channel is configured. guildID is
// the server asking: only sessions of its organisation are found. by is
// who asked, recorded as the Discord thread's creator.
func (c *Continuer) ContinueLinear(ctx context.Context, ref, channelID, guildID, by string) (*Continued, error) {
	org, err := c.Store.Organisation(ctx, thread.DiscordTenant(guildID))
	if err != nil {
		return nil, fmt.Errorf("continue %q: %w", ref, err)
	}
	var th *thread.Thread
	for _, cand := range linearRefs(ref) {
		if th, err = c.Store.ThreadByLinearRef(ctx, cand, org); !errors.Is(err, thread.ErrNotFound) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("continue %q: %w", ref, err)
	}
	return c.continueThread(ctx, th, org, channelID, by)
}

// Continue continues thread id in Discord, as ContinueLinear does, in a
// server of the thread's organisation (any, for the operator's threads).
func (c *Continuer) Continue(ctx context.Context, id uuid.UUID, channelID, by string) (*Continued, error) {
	th, err := c.Store.Thread(ctx, id)
	if err != nil {
		return nil, err
	}
	_, org, err := c.Store.ThreadTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.continueThread(ctx, th, org, channelID, by)
}

// continueThread continues th in channelID (or the configured channel),
// which must be in a server of org unless org is the operator's ("").
func (c *Continuer) continueThread(ctx context.Context, th *thread.Thread, org, channelID, by string) (*Continued, error) {
	if att, err := c.Store.DiscordAttachment(ctx, th.ID); err == nil {
		return &Continued{ThreadID: th.ID, URL: discordURL(att.GuildID, att.DiscordThreadID), Existing: true}, nil
	} else if !errors.Is(err, thread.ErrNotFound) {
		return nil, err
	}
	if c.ChannelID != "" {
		channelID = c.ChannelID
	}
	if channelID == "" {
		return nil, ErrNoContinueChannel
	}
	if org != "" {
		guild, err := c.Discord.ChannelGuild(ctx, channelID)
		if err != nil {
			return nil, fmt.Errorf("continue in channel %s: %w", channelID, err)
		}
		theirs, err := c.Store.Organisation(ctx, thread.DiscordTenant(guild))
		if err != nil {
			return nil, err
		}
		if theirs != org {
			return nil, ErrContinueOtherOrganisation
		}
	}
	chain, err := c.Store.Stitches(ctx, th.ID, db.StitchPage{Newest: true, Limit: summaryScan})
	if err != nil {
		return nil, err
	}
	name := th.Goal
	discordID, guildID, err := c.Discord.OpenThread(ctx, channelID, name)
	if err != nil {
		return nil, fmt.Errorf("open discord thread: %w", err)
	}
	url := discordURL(guildID, discordID)
	att := thread.DiscordAttachment{
		ThreadID: th.ID, DiscordThreadID: discordID, ChannelID: channelID, GuildID: guildID,
		CreatedBy: by, ThreadName: threadName(name),
	}
	err = c.Recorder.ContinueInDiscord(ctx, att, Summary(th.Goal, chain), "Continuing this conversation in Discord: "+url, url)
	if err != nil {
		return nil, err
	}
	return &Continued{ThreadID: th.ID, URL: url}, nil
}

// Tool is continue_in_discord, for the agent.
func (c *Continuer) Tool() Tool {
	return Tool{
		Name: "continue_in_discord",
		Description: "Move this conversation to a new Discord thread: it opens the thread, posts a summary of the conversation there, " +
			"and links it here. Use it when the user asks to continue or discuss in Discord. Returns the thread's link.",
		Schema: toolschema.For[struct{}](),
		Handler: func(ctx context.Context, call Call) (string, error) {
			got, err := c.Continue(ctx, call.ThreadID, "", call.AgentName)
			if err != nil {
				return "", err
			}
			if got.Existing {
				return "This conversation already continues in Discord: " + got.URL, nil
			}
			return "Opened a Discord thread, posted a summary there and linked it in Linear: " + got.URL, nil
		},
	}
}

// discordURL links a thread in Discord's clients.
func discordURL(guildID, threadID string) string {
	return fmt.Sprintf("https://discord.com/channels/%s/%s", guildID, threadID)
}

// maxThreadName is Discord's thread name limit, in code points.
const maxThreadName = 100

// threadName fits a goal into a thread name: one line, at most 100 code
// points, as the Discord client cuts it too.
func threadName(goal string) string {
	name := strings.Join(strings.Fields(goal), " ")
	if name == "" {
		name = "weft conversation"
	}
	return truncate(name, maxThreadName)
}

// Summary sizes: the stitches read, the turns shown, the length of each.
const (
	summaryScan  = 200
	summaryTurns = 12
	summaryText  = 280
)

// Summary is a short, deterministic account of a conversation for the
// Discord thread it continues in: the goal, then the latest questions and
// answers, each cut to one line. The model is not asked: the summary must
// be there at once and the same on every retry.
func Summary(goal string, chain []thread.Stitch) string {
	var lines []string
	for _, s := range chain {
		var who string
		switch {
		case s.Type.IsInput() && s.DeletedAt.IsZero():
			who = "Someone"
			if s.Author != nil && s.Author.Name != "" {
				who = s.Author.Name
			}
		case s.Type == thread.StitchLLMCall || s.Type == thread.StitchClarificationRequest:
			who = "weft"
		default:
			continue
		}
		text := strings.Join(strings.Fields(s.Content), " ")
		if text == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("> **%s:** %s", who, truncate(text, summaryText)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Continuing **%s** here.\n", strings.Join(strings.Fields(goal), " "))
	if len(lines) > summaryTurns {
		fmt.Fprintf(&b, "\n(%d earlier messages not shown)", len(lines)-summaryTurns)
		lines = lines[len(lines)-summaryTurns:]
	}
	if len(lines) > 0 {
		b.WriteString("\n**So far:**\n")
		b.WriteString(strings.Join(lines, "\n"))
		b.WriteString("\n")
	}
	b.WriteString("\nReply in this thread to continue; I have the whole conversation.")
	return b.String()
}

// truncate cuts s to n code points, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Patterns of what a Linear URL names: a session or issue UUID, an issue
// key (team key, dash, number).
var (
	uuidPattern     = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	issueKeyPattern = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9]{0,9}-[0-9]+\b`)
)

// linearRefs lists what ref may name, most specific first: the text as
// typed, then an issue key or UUID found in it (a Linear URL holds one).
func linearRefs(ref string) []string {
	ref = strings.TrimSpace(ref)
	out := []string{ref}
	for _, re := range []*regexp.Regexp{uuidPattern, issueKeyPattern} {
		for _, m := range re.FindAllString(ref, -1) {
			if m != ref {
				out = append(out, m)
			}
		}
	}
	return out
}
