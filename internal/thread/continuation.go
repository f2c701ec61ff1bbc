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
	// GitHub is an existing issue or pull request the thread continues on.
	GitHub *GitHubAttachment
	// Summary is posted in the new place as the conversation's first
	// message there.
	Summary string
	// ToldText is what the thread's attachment on Told is told: the Linear
	// session's response activity; URL and URLLabel its external link.
	ToldText, URL, URLLabel string
}

// Surface is where the continuation posts: its platform and outbox target.
func (c *Continuation) Surface() (Platform, string, error) {
	n := 0
	for _, set := range []bool{c.Discord != nil, c.Slack != nil, c.GitHub != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
	case c.Discord != nil:
		return PlatformDiscord, c.Discord.DiscordThreadID, nil
	case c.Slack != nil:
		return PlatformSlack, c.Slack.Target(), nil
	case c.GitHub != nil:
		return PlatformGitHub, c.GitHub.Target(), nil
	}
	return "", "", newError(ErrInvalid, "a continuation attaches exactly one Discord thread, Slack thread or GitHub issue")
}
