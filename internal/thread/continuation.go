package thread

import "github.com/google/uuid"

// Continuation moves a thread's conversation to a new place on another
// platform: the attachment to record there (exactly one of Discord and
// Slack), the summary posted there, and what the thread's Linear session,
// if it has one, is told.
type Continuation struct {
	ThreadID uuid.UUID
	Discord  *DiscordAttachment
	Slack    *SlackAttachment
	// Summary is posted in the new place as the conversation's first
	// message there.
	Summary string
	// LinearText is the Linear session's response activity; URL and
	// URLLabel its external link.
	LinearText, URL, URLLabel string
}

// Surface is where the continuation posts: its platform and outbox target.
func (c *Continuation) Surface() (Platform, string, error) {
	switch {
	case c.Discord != nil && c.Slack == nil:
		return PlatformDiscord, c.Discord.DiscordThreadID, nil
	case c.Slack != nil && c.Discord == nil:
		return PlatformSlack, c.Slack.Target(), nil
	}
	return "", "", newError(ErrInvalid, "a continuation attaches exactly one Discord or Slack thread")
}
