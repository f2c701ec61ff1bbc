package thread

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Platform is where input comes from and output goes to.
type Platform string

// Platforms. API and CLI are sources only: nothing is delivered to them.
const (
	PlatformDiscord Platform = "discord"
	PlatformLinear  Platform = "linear"
	PlatformSlack   Platform = "slack"
	PlatformGitHub  Platform = "github"
	PlatformAPI     Platform = "api"
	PlatformCLI     Platform = "cli"
)

// Valid reports whether p is a known platform.
func (p Platform) Valid() bool {
	switch p {
	case PlatformDiscord, PlatformLinear, PlatformSlack, PlatformGitHub, PlatformAPI, PlatformCLI:
		return true
	}
	return false
}

// Title is the platform as people write it in a sentence ("Linear", "the
// API"); an unknown one is its own name.
func (p Platform) Title() string {
	switch p {
	case PlatformLinear:
		return "Linear"
	case PlatformDiscord:
		return "Discord"
	case PlatformSlack:
		return "Slack"
	case PlatformGitHub:
		return "GitHub"
	case PlatformAPI:
		return "the API"
	case PlatformCLI:
		return "the CLI"
	}
	return string(p)
}

// DiscordAttachment ties a thread to a Discord thread.
type DiscordAttachment struct {
	ThreadID        uuid.UUID
	DiscordThreadID string
	ChannelID       string
	GuildID         string
	CreatedBy       string
	ThreadName      string
	LastMessageID   string
	Active          bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Validate checks the ids are snowflakes and the name fits Discord's limit.
func (d *DiscordAttachment) Validate() error {
	for _, id := range []string{d.DiscordThreadID, d.ChannelID, d.GuildID} {
		if !IsSnowflake(id) {
			return ErrInvalidSnowflake
		}
	}
	if d.LastMessageID != "" && !IsSnowflake(d.LastMessageID) {
		return ErrInvalidSnowflake
	}
	if n := len([]rune(d.ThreadName)); n == 0 || n > 100 {
		return newError(ErrInvalid, "discord thread name must be 1 to 100 characters")
	}
	if d.CreatedBy == "" {
		return newError(ErrInvalid, "discord attachment needs its creator")
	}
	return nil
}

// SlackAttachment ties a thread to a Slack thread: the conversation under
// ThreadTS (the ts of its parent message) in a channel of a workspace.
type SlackAttachment struct {
	ThreadID    uuid.UUID
	TeamID      string
	ChannelID   string
	ThreadTS    string
	ChannelType string // channel, group, im, mpim
	CreatedBy   string
	Active      bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Validate checks the ids Slack always sends.
func (s *SlackAttachment) Validate() error {
	if s.TeamID == "" || s.ChannelID == "" || s.ThreadTS == "" {
		return newError(ErrInvalid, "slack attachment needs a team, a channel and a thread ts")
	}
	if s.CreatedBy == "" {
		return newError(ErrInvalid, "slack attachment needs its creator")
	}
	return nil
}

// Target is where the thread's answers go in Slack, an outbox row's
// target: team/channel/thread_ts.
func (s *SlackAttachment) Target() string {
	return SlackTarget{TeamID: s.TeamID, ChannelID: s.ChannelID, ThreadTS: s.ThreadTS}.String()
}

// SlackTarget is an outbox row's target on Slack.
type SlackTarget struct {
	TeamID, ChannelID, ThreadTS string
}

// String is the target as stored: team/channel/thread_ts.
func (t SlackTarget) String() string { return t.TeamID + "/" + t.ChannelID + "/" + t.ThreadTS }

// ParseSlackTarget reads a target String wrote.
func ParseSlackTarget(s string) (SlackTarget, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return SlackTarget{}, newError(ErrInvalid, "slack target must be team/channel/thread_ts: "+s)
	}
	return SlackTarget{TeamID: parts[0], ChannelID: parts[1], ThreadTS: parts[2]}, nil
}

// SlackMessageID is a Slack message's external id on its stitch: its ts is
// unique only within its channel, so the team and channel come with it.
func SlackMessageID(teamID, channelID, ts string) string { return teamID + "/" + channelID + "/" + ts }

// SessionStatus is a Linear agent session's state as Linear reports it.
type SessionStatus string

// Linear session states. Linear marks a session stale after 30 minutes
// without activity.
const (
	SessionPending       SessionStatus = "pending"
	SessionActive        SessionStatus = "active"
	SessionError         SessionStatus = "error"
	SessionAwaitingInput SessionStatus = "awaitingInput"
	SessionComplete      SessionStatus = "complete"
	SessionStale         SessionStatus = "stale"
)

// Valid reports whether s is a known session state.
func (s SessionStatus) Valid() bool {
	switch s {
	case SessionPending, SessionActive, SessionError, SessionAwaitingInput, SessionComplete, SessionStale:
		return true
	}
	return false
}

// LinearAttachment ties a thread to a Linear agent session.
type LinearAttachment struct {
	ThreadID        uuid.UUID
	SessionID       string
	WorkspaceID     string
	IssueID         string
	IssueIdentifier string
	IssueTitle      string
	ProjectID       string
	TeamID          string
	CommentID       string
	CreatedByUserID string
	SessionStatus   SessionStatus
	Active          bool
	LastActivityAt  time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Validate checks the ids Linear always sends.
func (l *LinearAttachment) Validate() error {
	if l.SessionID == "" || l.WorkspaceID == "" || l.CreatedByUserID == "" {
		return ErrInvalidSessionMetadata
	}
	if l.SessionStatus != "" && !l.SessionStatus.Valid() {
		return newError(ErrInvalid, "unknown linear session status "+string(l.SessionStatus))
	}
	return nil
}
