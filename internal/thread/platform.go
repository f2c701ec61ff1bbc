package thread

import (
	"time"

	"github.com/google/uuid"
)

// Platform is where input comes from and output goes to.
type Platform string

// Platforms. API and CLI are sources only: nothing is delivered to them.
const (
	PlatformDiscord Platform = "discord"
	PlatformLinear  Platform = "linear"
	PlatformAPI     Platform = "api"
	PlatformCLI     Platform = "cli"
)

// Valid reports whether p is a known platform.
func (p Platform) Valid() bool {
	switch p {
	case PlatformDiscord, PlatformLinear, PlatformAPI, PlatformCLI:
		return true
	}
	return false
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
