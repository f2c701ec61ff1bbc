package thread

import (
	"context"
	"strings"

	"github.com/google/uuid"
)

// Draft is a new thread as the Builder made it: the thread, its platform
// attachments and its first stitches (system prompt, then initial prompt),
// validated and ready to be written in one transaction.
type Draft struct {
	Thread   Thread
	Discord  *DiscordAttachment
	Linear   *LinearAttachment
	Slack    *SlackAttachment
	GitHub   *GitHubAttachment
	Stitches []Stitch
	// Tenant is where the thread lives, which bounds its memory and what
	// its agent may read; Person is who started it (Person's key).
	Tenant Tenant
	Person string
}

// Creator persists a draft atomically: all of it or nothing. *db.Store and
// *db.Tx implement it.
type Creator interface {
	CreateThread(ctx context.Context, d *Draft) (*Thread, error)
}

// Builder makes new threads. It builds and validates a Draft; a Creator then
// writes it in one transaction, so a failure anywhere leaves nothing behind.
//
//	t, err := thread.NewBuilder(memory).
//		WithGoal("Research API options").
//		InteractiveLinear(&meta).
//		WithInitialPrompt(thread.Stitch{Content: prompt}).
//		Build(ctx, store)
type Builder struct {
	memory  *MemoryManager
	goal    string
	typ     Type
	agent   string
	discord *DiscordAttachment
	linear  *LinearAttachment
	tenant  Tenant
	slack   *SlackAttachment
	github  *GitHubAttachment
	prompt  *Stitch
}

// NewBuilder returns a Builder whose system prompts come from memory. A nil
// memory uses the default persona and no memory blocks.
func NewBuilder(memory *MemoryManager) *Builder {
	return &Builder{memory: memory, agent: DefaultAgent}
}

// WithGoal sets what the thread is for. It is required.
func (b *Builder) WithGoal(goal string) *Builder { b.goal = goal; return b }

// Autonomous makes a thread that works its goal without a platform.
func (b *Builder) Autonomous() *Builder { b.typ = TypeAutonomous; return b }

// InteractiveDiscord makes a conversation attached to a Discord thread. A nil
// attachment makes Build fail with ErrNoPlatform.
func (b *Builder) InteractiveDiscord(d *DiscordAttachment) *Builder {
	b.typ = TypeInteractive
	if d != nil {
		cp := *d
		b.discord = &cp
	}
	return b
}

// InteractiveLinear makes a conversation attached to a Linear agent session.
// A nil attachment makes Build fail with ErrNoPlatform.
func (b *Builder) InteractiveLinear(l *LinearAttachment) *Builder {
	b.typ = TypeInteractive
	if l != nil {
		cp := *l
		b.linear = &cp
	}
	return b
}

// InteractiveSlack makes a conversation attached to a Slack thread. A nil
// attachment makes Build fail with ErrNoPlatform.
func (b *Builder) InteractiveSlack(s *SlackAttachment) *Builder {
	b.typ = TypeInteractive
	if s != nil {
		cp := *s
		b.slack = &cp
	}
	return b
}

// WithAgent names the agent (persona and memory) that runs the thread.
func (b *Builder) WithAgent(name string) *Builder { b.agent = name; return b }

// WithTenant sets the thread's tenant. A platform thread takes its own
// from its attachment (Linear workspace, Discord server, Slack workspace).
func (b *Builder) WithTenant(t Tenant) *Builder { b.tenant = t; return b }

// WithInitialPrompt sets the first input: its content, and where it came from
// when it came from a platform. Without it the goal is the initial prompt.
func (b *Builder) WithInitialPrompt(s Stitch) *Builder { b.prompt = &s; return b }

// Draft validates the builder's settings and returns the new thread as a value.
func (b *Builder) Draft(ctx context.Context) (*Draft, error) {
	if strings.TrimSpace(b.goal) == "" {
		return nil, ErrEmptyGoal
	}
	typ := b.typ
	if typ == "" {
		typ = TypeAutonomous
	}
	if typ == TypeInteractive && b.discord == nil && b.linear == nil && b.slack == nil && b.github == nil {
		return nil, ErrNoPlatform
	}
	agent := b.agent
	if agent == "" {
		agent = DefaultAgent
	}
	d := &Draft{Thread: Thread{
		ID:        NewID(),
		Type:      typ,
		Goal:      b.goal,
		Status:    StatusPending,
		AgentName: agent,
	}}
	if b.discord != nil {
		att := *b.discord
		att.ThreadID, att.Active = d.Thread.ID, true
		if err := att.Validate(); err != nil {
			return nil, err
		}
		d.Discord = &att
	}
	if b.slack != nil {
		att := *b.slack
		att.ThreadID, att.Active = d.Thread.ID, true
		if err := att.Validate(); err != nil {
			return nil, err
		}
		d.Slack = &att
	}
	if b.github != nil {
		att := *b.github
		att.ThreadID, att.Active = d.Thread.ID, true
		if err := att.Validate(); err != nil {
			return nil, err
		}
		d.GitHub = &att
	}
	if b.linear != nil {
		att := *b.linear
		att.ThreadID, att.Active = d.Thread.ID, true
		if att.SessionStatus == "" {
			att.SessionStatus = SessionPending
		}
		if err := att.Validate(); err != nil {
			return nil, err
		}
		d.Linear = &att
	}

	switch d.Tenant = b.tenant; {
	case d.Tenant != Tenant{}:
		if err := d.Tenant.Validate(); err != nil {
			return nil, err
		}
	case d.Linear != nil:
		d.Tenant = LinearTenant(d.Linear.WorkspaceID)
	case d.Discord != nil:
		d.Tenant = DiscordTenant(d.Discord.GuildID)
	case d.Slack != nil:
		d.Tenant = SlackTenant(d.Slack.TeamID)
	case d.GitHub != nil:
		d.Tenant = GitHubTenant(d.GitHub.AccountID)
	}
	prompt := Stitch{Content: b.goal}
	if b.prompt != nil {
		prompt = *b.prompt
	}
	switch d.Person = Person(prompt); {
	case d.Person != "":
	case d.Linear != nil:
		d.Person = PersonOn(PlatformLinear, d.Linear.CreatedByUserID)
	case d.Discord != nil:
		d.Person = PersonOn(PlatformDiscord, d.Discord.CreatedBy)
	case d.Slack != nil:
		d.Person = PersonOn(PlatformSlack, d.Slack.CreatedBy)
	case d.GitHub != nil:
		d.Person = PersonOn(PlatformGitHub, d.GitHub.CreatedBy)
	}

	memory := b.memory
	if memory == nil {
		memory = &MemoryManager{}
	}
	system, err := memory.SystemPrompt(ctx, d)
	if err != nil {
		return nil, err
	}
	prompt.Type = StitchInitialPrompt
	d.Stitches = []Stitch{
		{Type: StitchSystemPrompt, Content: system},
		prompt,
	}
	var prev uuid.UUID
	for i := range d.Stitches {
		s := &d.Stitches[i]
		s.ID, s.ThreadID, s.PreviousID, s.Seq = NewID(), d.Thread.ID, prev, int64(i+1)
		if err := s.Validate(); err != nil {
			return nil, err
		}
		prev = s.ID
	}
	d.Thread.StitchCount = int64(len(d.Stitches))
	d.Thread.HeadStitchID = prev
	return d, nil
}

// Build drafts the thread and has c write it in one transaction.
func (b *Builder) Build(ctx context.Context, c Creator) (*Thread, error) {
	d, err := b.Draft(ctx)
	if err != nil {
		return nil, err
	}
	return c.CreateThread(ctx, d)
}

// NewID returns a new time-ordered id: rows written together sit together in
// the indexes.
func NewID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does.
		return uuid.New()
	}
	return id
}
