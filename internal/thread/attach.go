package thread

import "errors"

// Attachment is a platform conversation a thread is attached to: a
// *LinearAttachment, *DiscordAttachment, *SlackAttachment or
// *GitHubAttachment. The ingester
// finds and builds threads through it without knowing which.
type Attachment interface {
	// AttachedTo is the attachment's platform.
	AttachedTo() Platform
	// Conversation is the conversation's key on its platform, unique
	// there: what orders the writes of several at once.
	Conversation() string
}

// Conversation is the session's id.
func (a *LinearAttachment) Conversation() string { return a.SessionID }

// Conversation is the Discord thread's id.
func (a *DiscordAttachment) Conversation() string { return a.DiscordThreadID }

// Conversation is the team, channel and parent ts.
func (a *SlackAttachment) Conversation() string {
	return a.TeamID + "/" + a.ChannelID + "/" + a.ThreadTS
}

// AttachedTo is Linear.
func (*LinearAttachment) AttachedTo() Platform { return PlatformLinear }

// AttachedTo is Discord.
func (*DiscordAttachment) AttachedTo() Platform { return PlatformDiscord }

// AttachedTo is Slack.
func (*SlackAttachment) AttachedTo() Platform { return PlatformSlack }

// Interactive makes a conversation attached to a; a nil or unknown
// attachment makes Draft fail with ErrNoPlatform.
func (b *Builder) Interactive(a Attachment) *Builder {
	switch a := a.(type) {
	case *LinearAttachment:
		return b.InteractiveLinear(a)
	case *DiscordAttachment:
		return b.InteractiveDiscord(a)
	case *SlackAttachment:
		return b.InteractiveSlack(a)
	case *GitHubAttachment:
		return b.InteractiveGitHub(a)
	}
	return b.InteractiveDiscord(nil)
}

// IsAttached reports whether err says a conversation is attached to a
// weft thread already, whatever its platform.
func IsAttached(err error) bool {
	return errors.Is(err, ErrLinearSessionAttached) || errors.Is(err, ErrDiscordThreadAttached) || errors.Is(err, ErrSlackThreadAttached) ||
		errors.Is(err, ErrGitHubThreadAttached)
}

// Attachment is where the continuation attaches the thread: its Discord
// or Slack thread or GitHub issue (nil when none is set).
func (c *Continuation) Attachment() Attachment {
	switch {
	case c.Discord != nil:
		return c.Discord
	case c.Slack != nil:
		return c.Slack
	case c.GitHub != nil:
		return c.GitHub
	}
	return nil
}

// Notice is a row of the outbox, with its body, that tells one of a
// thread's attachments of something.
type Notice struct {
	Outbox Outbox
	Body   OutboxBody
}

// Told is the platform whose attachment of the thread is told of a
// continuation (its Linear session), by Notices.
func (c *Continuation) Told() Platform { return PlatformLinear }

// Notices are what the thread's attachment on Told, whose outbox target
// is target, is told: a response activity with ToldText, and the
// session's external link to the new place.
func (c *Continuation) Notices(target string) []Notice {
	return []Notice{
		{Outbox{ThreadID: c.ThreadID, Platform: PlatformLinear, Target: target, Kind: OutboxResponse}, OutboxBody{Text: c.ToldText}},
		{Outbox{ThreadID: c.ThreadID, Platform: PlatformLinear, Target: target, Kind: OutboxSessionUpdate},
			OutboxBody{ExternalURL: c.URL, ExternalURLLabel: c.URLLabel}},
	}
}
