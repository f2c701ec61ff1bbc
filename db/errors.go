package db

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-dev/weft/internal/thread"
)

// Postgres error codes weft acts on.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeCheckViolation       = "23514"
	codeNotNullViolation     = "23502"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeNoDataFound          = "P0002"
	// classDataException is SQLSTATE class 22: a value the column's type
	// cannot hold.
	classDataException = "22"
	// codeTurnNotHeld is raised by weft_hold_turn: the turn lost the
	// thread's lease or the thread was aborted.
	codeTurnNotHeld = "WT001"
)

// constraintErrors names the domain error for a unique constraint whose
// violation means something to callers.
var constraintErrors = map[string]error{
	"stitches_source_external_key":                  thread.ErrDuplicateExternalID,
	"discord_thread_metadata_discord_thread_id_key": thread.ErrDiscordThreadAttached,
	"linear_thread_metadata_session_id_key":         thread.ErrLinearSessionAttached,
	"discord_thread_metadata_pkey":                  thread.ErrAlreadyAttached,
	"linear_thread_metadata_pkey":                   thread.ErrAlreadyAttached,
	"slack_thread_metadata_thread_key":              thread.ErrSlackThreadAttached,
	"slack_thread_metadata_pkey":                    thread.ErrAlreadyAttached,
	"github_thread_metadata_conversation_key":       thread.ErrGitHubThreadAttached,
	"github_thread_metadata_pkey":                   thread.ErrAlreadyAttached,
	"webhook_deliveries_pkey":                       thread.ErrDuplicateDelivery,
	"webhook_deliveries_event_key":                  thread.ErrDuplicateDelivery,
}

// ConstraintError is a database constraint violation with no more specific
// domain meaning. Its kind (Is) is ErrDuplicate for unique violations and
// ErrInvalid for the others.
type ConstraintError struct {
	Constraint string
	kind       error
	err        *pgconn.PgError
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("constraint %s: %s", e.Constraint, e.err.Message)
}

// Is reports the violation's kind.
func (e *ConstraintError) Is(target error) bool { return target == e.kind }

// Unwrap returns the driver's error.
func (e *ConstraintError) Unwrap() error { return e.err }

// errRetryable marks failures a caller may retry as they are: serialization
// failures and deadlocks.
var errRetryable = errors.New("retryable database conflict")

// IsRetryable reports whether err is a transient conflict worth retrying.
func IsRetryable(err error) bool { return errors.Is(err, errRetryable) }

// Refused reports whether err is the database refusing a write for what
// it holds (a constraint, a conflict, bad data, a row gone or not as
// expected) rather than failing to answer it (unreachable, restarting,
// read-only, a timeout): a write of many parts that was refused may go
// through in parts; one that was not answered would fare no better.
func Refused(err error) bool {
	for _, kind := range []error{thread.ErrInvalid, thread.ErrNotFound, thread.ErrDuplicate, thread.ErrConflict, thread.ErrAborted} {
		if errors.Is(err, kind) {
			return true
		}
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch sqlClass(pgErr) {
	case classDataException, "23", "40": // data exceptions, constraint violations, rollbacks (deadlock, serialization)
		return true
	}
	return pgErr.Code == codeNoDataFound || pgErr.Code == codeTurnNotHeld
}

// sqlClass is the class of a SQLSTATE, its first two characters ("" for a
// malformed code).
func sqlClass(e *pgconn.PgError) string {
	if len(e.Code) != 5 {
		return ""
	}
	return e.Code[:2]
}

// translate turns driver errors into domain errors. It is the only place that
// looks inside them.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return thread.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	if sqlClass(pgErr) == classDataException {
		return fmt.Errorf("%w: %w", thread.ErrUnstorable, pgErr)
	}
	switch pgErr.Code {
	case codeUniqueViolation:
		if domain, ok := constraintErrors[pgErr.ConstraintName]; ok {
			return domain
		}
		return &ConstraintError{Constraint: pgErr.ConstraintName, kind: thread.ErrDuplicate, err: pgErr}
	case codeForeignKeyViolation:
		if pgErr.ConstraintName == "stitches_thread_id_fkey" || pgErr.ConstraintName == "platform_deliveries_thread_id_fkey" {
			return thread.ErrNotFound
		}
		return &ConstraintError{Constraint: pgErr.ConstraintName, kind: thread.ErrInvalid, err: pgErr}
	case codeCheckViolation, codeNotNullViolation:
		return &ConstraintError{Constraint: pgErr.ConstraintName, kind: thread.ErrInvalid, err: pgErr}
	case codeNoDataFound:
		return thread.ErrNotFound
	case codeTurnNotHeld:
		return thread.ErrAborted
	case codeSerializationFailure, codeDeadlockDetected:
		return fmt.Errorf("%w: %w", errRetryable, pgErr)
	}
	return err
}
