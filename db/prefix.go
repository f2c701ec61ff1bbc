package db

import "strings"

// prefixed qualifies each column of a comma-separated list with p, for
// RETURNING clauses of UPDATE ... FROM, where names would be ambiguous.
func prefixed(p, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
