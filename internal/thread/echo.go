package thread

import (
	"fmt"
	"strings"
)

// Surface is a place on a platform a thread's outputs can go: a Linear
// session, a Discord thread (its channel id), a Slack thread (a
// SlackTarget).
type Surface struct {
	Platform Platform
	Target   string
}

// EchoPolicy is what a surface a thread is attached to hears of the
// conversation while it goes on elsewhere (on another surface of the
// thread).
type EchoPolicy string

// Echo policies.
const (
	// EchoEverything mirrors each exchange: the questions asked elsewhere,
	// attributed, with their answer.
	EchoEverything EchoPolicy = "everything"
	// EchoAnswers mirrors each answer.
	EchoAnswers EchoPolicy = "answers"
	// EchoSummary posts one digest of what happened once the conversation
	// has been idle for a while.
	EchoSummary EchoPolicy = "summary"
	// EchoNone says nothing.
	EchoNone EchoPolicy = "none"
)

// DefaultEchoPolicies are weft's defaults: a Linear session or a GitHub
// issue hears one summary once the conversation goes quiet (the issue
// shows how it ended without an activity or a comment per chat message),
// a Discord or Slack thread each
// answer (a chat thread reads as a conversation; answers without their
// questions keep it short). A platform without one hears nothing.
func DefaultEchoPolicies() map[Platform]EchoPolicy {
	return map[Platform]EchoPolicy{PlatformLinear: EchoSummary, PlatformDiscord: EchoAnswers, PlatformSlack: EchoAnswers,
		PlatformGitHub: EchoSummary}
}

// ParseEchoPolicy reads a policy's name (case and surrounding space aside).
func ParseEchoPolicy(s string) (EchoPolicy, error) {
	switch p := EchoPolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case EchoEverything, EchoAnswers, EchoSummary, EchoNone:
		return p, nil
	}
	return "", fmt.Errorf("%w: echo policy %q is not everything, answers, summary or none", ErrInvalid, s)
}
