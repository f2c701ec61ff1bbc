package thread

import (
	"errors"
	"fmt"
)

// Kinds of failure. Callers test with errors.Is; the HTTP layer maps each kind
// to one status code.
var (
	ErrNotFound  = errors.New("not found")
	ErrDuplicate = errors.New("duplicate")
	ErrConflict  = errors.New("conflict")
	ErrInvalid   = errors.New("invalid")
	ErrAborted   = errors.New("aborted")
)

// Error is a domain error of a given kind. errors.Is matches both the error
// itself and its kind, so a caller can ask for ErrEmptyGoal or for any
// ErrInvalid.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

func newError(kind error, msg string) *Error { return &Error{Kind: kind, Msg: msg} }

// Errors of the ThreadBuilder and of attaching platforms.
var (
	ErrEmptyGoal              = newError(ErrInvalid, "thread goal is empty")
	ErrNoPlatform             = newError(ErrInvalid, "interactive thread needs Discord or Linear metadata")
	ErrDiscordThreadAttached  = newError(ErrConflict, "discord thread is already attached to a weft thread")
	ErrSlackThreadAttached    = newError(ErrConflict, "slack thread is already attached to a weft thread")
	ErrGitHubThreadAttached   = newError(ErrConflict, "github conversation is already attached to a weft thread")
	ErrLinearSessionAttached  = newError(ErrConflict, "linear session is already attached to a weft thread")
	ErrAlreadyAttached        = newError(ErrConflict, "thread already has an attachment on that platform")
	ErrDuplicateExternalID    = newError(ErrDuplicate, "a stitch with this source and external id exists")
	ErrDuplicateDelivery      = newError(ErrDuplicate, "delivery already recorded")
	ErrDeliveryNotClaimable   = newError(ErrConflict, "delivery is not due or is claimed elsewhere")
	ErrLeaseHeld              = newError(ErrConflict, "thread lease is held by another worker")
	ErrInvalidSnowflake       = newError(ErrInvalid, "discord id is not a snowflake")
	ErrInvalidSessionMetadata = newError(ErrInvalid, "linear metadata needs session, workspace and creator ids")
	// ErrUnstorable is a value the database cannot store: a NUL character,
	// invalid UTF-8, JSON that jsonb refuses, a number out of range.
	ErrUnstorable = newError(ErrInvalid, "value the database cannot store")
)

// TransitionError reports a status change the status machine forbids.
type TransitionError struct {
	From, To Status
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("thread status cannot go from %s to %s", e.From, e.To)
}

// Is makes a TransitionError an ErrConflict.
func (e *TransitionError) Is(target error) bool { return target == ErrConflict }
