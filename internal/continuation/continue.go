// Package continuation moves a conversation to another platform: the
// Continuer opens a thread there through the platform's Opener (each
// platform's is in its seam folder), attaches it to the same weft thread,
// posts a summary of the conversation so far and links it back where the
// conversation started. Continuer.Tool offers it to the agent; the
// platforms' continue commands call it directly, finding the conversation
// a person names through every platform's Resolver.
package continuation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/tenancy"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/internal/toolschema"
)

// Opener opens a conversation on one platform for a thread continued
// there. Each platform that continues conversations has one in its seam
// folder.
type Opener interface {
	// Platform is where it opens conversations.
	Platform() thread.Platform
	// Attached returns the link of the conversation thread id continues in
	// on this platform already, or thread.ErrNotFound.
	Attached(ctx context.Context, id uuid.UUID) (string, error)
	// Tenant is the server or workspace a channel is in.
	Tenant(ctx context.Context, channelID string) (thread.Tenant, error)
	// Open opens a conversation for th in o.ChannelID and returns its
	// attachment and link; the Continuer fills in the rest.
	Open(ctx context.Context, th *thread.Thread, o Opening) (*thread.Continuation, error)
	// Bold is text in bold in the platform's markup, for the summary.
	Bold(text string) string
}

// Opening is what an Opener opens a conversation with.
type Opening struct {
	ChannelID string
	// Tenant is the channel's server or workspace when the Continuer knows
	// it (a command's own channel); zero leaves it to the Opener.
	Tenant thread.Tenant
	// By is who asked, recorded as the conversation's creator.
	By string
	// Origin links back to where the conversation comes from: the issue it
	// started on (URL empty when weft could not read it), or nothing.
	Origin Link
}

// Link is a labelled URL.
type Link struct{ Label, URL string }

// Recorder attaches a thread to a new platform thread and
// queues the announcements, atomically. *ingest.Ingester implements it.
type Recorder interface {
	Continue(ctx context.Context, c thread.Continuation) error
}

// Store reads what continuing needs. *db.Store implements it.
type Store interface {
	tenancy.Organisations
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	Stitches(ctx context.Context, threadID uuid.UUID, p db.StitchPage) ([]thread.Stitch, error)
}

// Originator links back to where a conversation comes from on its
// platform (an issue), or returns thread.ErrNotFound: the thread is
// not attached there. Every platform that implements surface.Originating
// is one.
type Originator interface {
	Origin(ctx context.Context, threadID uuid.UUID) (label, url string, err error)
}

// Resolver finds the thread a reference a person typed names, among an
// organisation's, or returns thread.ErrNotFound. Every platform that
// implements surface.Resolving is one.
type Resolver interface {
	// Name is the platform whose conversations it finds.
	Name() thread.Platform
	// Hint is what a person types to name one, for help text: "a thread's
	// link".
	Hint() string
	Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error)
}

// ErrNoChannel: neither the platform's continue channel setting
// nor the caller names a channel to open the conversation in. The error
// returned names the setting (Continuer.ChannelSetting).
var ErrNoChannel = &thread.Error{Kind: thread.ErrInvalid, Msg: "no channel to continue in"}

// noChannel is ErrNoChannel naming the setting that would name the
// channel; it is a *thread.Error of ErrNoChannel's kind, so that commands
// show its message as ErrNoChannel's.
type noChannel struct{ err *thread.Error }

func (e noChannel) Error() string      { return e.err.Msg }
func (e noChannel) Unwrap() error      { return e.err }
func (noChannel) Is(target error) bool { return target == ErrNoChannel }

// errNoChannel is ErrNoChannel naming c's channel setting.
func (c *Continuer) errNoChannel() noChannel {
	msg := ErrNoChannel.Msg
	if c.ChannelSetting != "" {
		msg += ": set " + c.ChannelSetting
	}
	return noChannel{&thread.Error{Kind: ErrNoChannel.Kind, Msg: msg}}
}

// ErrOtherOrganisation refuses to continue a conversation in a
// server or workspace of another organisation: link them with `weft tenant
// link` first.
var ErrOtherOrganisation = &thread.Error{Kind: thread.ErrInvalid,
	Msg: "the channel to continue in is in another organisation than this conversation: link them with `weft tenant link`"}

// Continuer continues a conversation on one platform, through its Opener:
// it opens a thread there, attaches it to the same weft thread, posts a
// summary of the conversation there and links it back where the
// conversation started. Messages in the new thread then continue the weft
// thread with its whole history, and each answer goes where its question
// was asked. Each platform's continue_in_<platform> tool and continue
// command use it.
type Continuer struct {
	Store    Store
	Opener   Opener
	Recorder Recorder
	// Refs find the conversation a command names: every platform's, asked
	// in turn.
	Refs []Resolver
	// ChannelID is where conversations open (the platform's continue
	// channel setting); empty means the channel the caller names.
	ChannelID string
	// ChannelSetting is the variable that sets ChannelID, named when
	// neither it nor the caller names a channel.
	ChannelSetting string
	// Origins link back to where a conversation comes from: the first
	// that knows the thread does.
	Origins []Originator
}

// Continued is where a conversation continues.
type Continued struct {
	ThreadID uuid.UUID
	URL      string
	// Existing reports that the thread was on the platform already:
	// nothing new was opened.
	Existing bool
}

// ContinueRef continues the conversation ref names, in channelID unless a
// continue channel is configured: whichever of c.Refs knows it (an issue
// key, a thread's link...). asker is the server or
// workspace asking: only conversations of its organisation are found. by
// is who asked, recorded as the new thread's creator.
func (c *Continuer) ContinueRef(ctx context.Context, ref, channelID string, asker thread.Tenant, by string) (*Continued, error) {
	org, err := c.Store.Organisation(ctx, asker)
	if err != nil {
		return nil, fmt.Errorf("continue %q: %w", ref, err)
	}
	th, err := c.resolve(ctx, ref, org)
	if err != nil {
		return nil, fmt.Errorf("continue %q: %w", ref, err)
	}
	return c.continueThread(ctx, th, org, channelID, asker, by)
}

// Elsewhere names the platforms whose conversations c finds to continue
// on its own, as people write them, the last after "or".
func (c *Continuer) Elsewhere() string {
	var names []string
	for _, r := range c.others() {
		names = append(names, r.Name().Title())
	}
	return join(names, " or ")
}

// Hints says what a person types to name a conversation c continues:
// the Refs' Hints, the last after ", or".
func (c *Continuer) Hints() string {
	var hints []string
	for _, r := range c.others() {
		hints = append(hints, r.Hint())
	}
	return join(hints, ", or ")
}

// others are c.Refs but the platform c continues on: a conversation
// there is there already.
func (c *Continuer) others() []Resolver {
	var out []Resolver
	for _, r := range c.Refs {
		if r.Name() != c.Opener.Platform() {
			out = append(out, r)
		}
	}
	return out
}

// join lists items as a sentence does, last before the last item:
// "a", "a or b", "a, b or c".
func join(items []string, last string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// resolve is the thread the first of c.Refs to know ref finds.
func (c *Continuer) resolve(ctx context.Context, ref, org string) (*thread.Thread, error) {
	for _, r := range c.Refs {
		if th, err := r.Resolve(ctx, ref, org); !errors.Is(err, thread.ErrNotFound) {
			return th, err
		}
	}
	return nil, thread.ErrNotFound
}

// Continue continues thread id as ContinueRef does, in a server or
// workspace of the thread's organisation (any, for the operator's threads).
func (c *Continuer) Continue(ctx context.Context, id uuid.UUID, channelID, by string) (*Continued, error) {
	th, err := c.Store.Thread(ctx, id)
	if err != nil {
		return nil, err
	}
	_, org, err := c.Store.ThreadTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.continueThread(ctx, th, org, channelID, thread.Tenant{}, by)
}

// continueThread continues th in channelID (or the configured channel),
// which must be in a server or workspace of org unless org is the
// operator's (""). tenant is channelID's server or workspace when known: a
// command's channel is in the server or workspace that asked.
func (c *Continuer) continueThread(ctx context.Context, th *thread.Thread, org, channelID string, tenant thread.Tenant, by string) (*Continued, error) {
	if url, err := c.Opener.Attached(ctx, th.ID); err == nil {
		return &Continued{ThreadID: th.ID, URL: url, Existing: true}, nil
	} else if !errors.Is(err, thread.ErrNotFound) {
		return nil, err
	}
	if c.ChannelID != "" {
		channelID, tenant = c.ChannelID, thread.Tenant{}
	}
	if channelID == "" {
		return nil, c.errNoChannel()
	}
	if org != "" {
		if tenant.ID == "" {
			var err error
			if tenant, err = c.Opener.Tenant(ctx, channelID); err != nil {
				return nil, fmt.Errorf("continue in channel %s: %w", channelID, err)
			}
		}
		theirs, err := c.Store.Organisation(ctx, tenant)
		if err != nil {
			return nil, err
		}
		if theirs != org {
			return nil, ErrOtherOrganisation
		}
	}
	chain, err := c.Store.Stitches(ctx, th.ID, db.StitchPage{Newest: true, Limit: summaryScan})
	if err != nil {
		return nil, err
	}
	origin, err := c.origin(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	got, err := c.Opener.Open(ctx, th, Opening{ChannelID: channelID, Tenant: tenant, By: by, Origin: origin})
	if err != nil {
		return nil, fmt.Errorf("open %s thread: %w", c.Opener.Platform(), err)
	}
	name := platformName(c.Opener.Platform())
	got.ThreadID = th.ID
	got.Summary = summary(th.Goal, chain, origin, c.Opener.Bold)
	if iv, ok := c.Opener.(inviter); ok {
		got.Summary = strings.Replace(got.Summary, invite, iv.Invite(), 1)
	}
	got.ToldText = "Continuing this conversation in " + name + ": " + got.URL
	got.URLLabel = name + " thread"
	if err := c.Recorder.Continue(ctx, *got); err != nil {
		return nil, err
	}
	return &Continued{ThreadID: th.ID, URL: got.URL}, nil
}

// origin links back to where the thread comes from, if anywhere.
func (c *Continuer) origin(ctx context.Context, id uuid.UUID) (Link, error) {
	for _, o := range c.Origins {
		label, url, err := o.Origin(ctx, id)
		if errors.Is(err, thread.ErrNotFound) {
			continue
		}
		return Link{Label: label, URL: url}, err
	}
	return Link{}, nil
}

// Tool is continue_in_<platform>, for the agent.
func (c *Continuer) Tool() tools.Tool {
	name := platformName(c.Opener.Platform())
	told := platformName(new(thread.Continuation).Told())
	return tools.Tool{
		Name: "continue_in_" + string(c.Opener.Platform()),
		Description: "Move this conversation to a new " + name + " thread: it opens the thread, posts a summary of the conversation there " +
			"linking back to where it started (a " + told + " session is also given the link). Use it when the user asks to continue or discuss in " +
			name + ". Returns the thread's link; tell the user where to find it.",
		Schema: toolschema.For[struct{}](),
		Handler: func(ctx context.Context, call tools.Call) (string, error) {
			got, err := c.Continue(ctx, call.ThreadID, "", call.AgentName)
			if err != nil {
				return "", err
			}
			if got.Existing {
				return "This conversation already continues in " + name + ": " + got.URL, nil
			}
			return "Opened a " + name + " thread and posted a summary of the conversation there: " + got.URL, nil
		},
	}
}

// invite ends a summary: how to go on where it is posted.
const invite = "Reply in this thread to continue; I have the whole conversation."

// inviter is an Opener whose platform goes on otherwise (GitHub answers
// mentions only): its Invite replaces invite.
type inviter interface{ Invite() string }

// platformName is a platform as people write it.
func platformName(p thread.Platform) string { return p.Title() }

// Summary sizes: the stitches read, the turns shown, the length of each.
const (
	summaryScan  = 200
	summaryTurns = 12
	summaryText  = 280
)

// Summary is a short, deterministic account of a conversation for the
// thread it continues in, in Markdown: the goal, then the latest questions and
// answers, each cut to one line. The model is not asked: the summary must
// be there at once and the same on every retry.
func Summary(goal string, chain []thread.Stitch) string {
	return summary(goal, chain, Link{}, func(s string) string { return "**" + s + "**" })
}

// summary is Summary with a link back to origin, when it has a URL, and
// bold in the markup of the platform it is posted on.
func summary(goal string, chain []thread.Stitch, origin Link, bold func(string) string) string {
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
		lines = append(lines, fmt.Sprintf("> %s %s", bold(who+":"), truncate(text, summaryText)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Continuing %s here.\n", bold(strings.Join(strings.Fields(goal), " ")))
	if origin.URL != "" {
		fmt.Fprintf(&b, "From %s: %s\n", origin.Label, origin.URL)
	}
	if len(lines) > summaryTurns {
		fmt.Fprintf(&b, "\n(%d earlier messages not shown)", len(lines)-summaryTurns)
		lines = lines[len(lines)-summaryTurns:]
	}
	if len(lines) > 0 {
		fmt.Fprintf(&b, "\n%s\n", bold("So far:"))
		b.WriteString(strings.Join(lines, "\n"))
		b.WriteString("\n")
	}
	b.WriteString("\n" + invite)
	return b.String()
}

// truncate cuts s to n code points, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
