package db

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// Helpers mapping between the domain's zero values and SQL NULL, so that
// pgtype never escapes this package.

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullUUID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func nullJSON(j json.RawMessage) []byte {
	if len(j) == 0 {
		return nil
	}
	return j
}

func nullInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func str(s pgtype.Text) string { return s.String }

func tm(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time
}

func uid(u pgtype.UUID) uuid.UUID {
	if !u.Valid {
		return uuid.Nil
	}
	return u.Bytes
}

func millis(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
