package db

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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

func collectIDs(rows pgx.Rows) ([]uuid.UUID, error) {
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	return ids, translate(err)
}

// prefixed qualifies each column of a comma-separated list with p, for
// RETURNING clauses of UPDATE ... FROM, where names would be ambiguous.
func prefixed(p, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// collect scans every row with scan and closes rows.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (*T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, translate(rows.Err())
}
