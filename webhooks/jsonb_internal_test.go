package webhooks

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/db/dbtest"
)

// TestJSONBTakes checks jsonbTakes against Postgres itself.
func TestJSONBTakes(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewPool(t)
	tests := []struct {
		name string
		body string
		want bool
	}{
		{"Plain", `{"a":"b"}`, true},
		{"Escapes", `{"a":"\"\\\/\b\f\n\r\t"}`, true},
		{"UnicodeEscape", `{"a":"caf\u00e9"}`, true},
		{"Pair", `{"a":"\ud83d\ude00"}`, true},
		{"PairUpper", `{"a":"\uD83D\uDE00"}`, true},
		{"RawEmoji", `{"a":"😀"}`, true},
		{"EscapedBackslashThenU0000", `{"a":"\\u0000"}`, true},
		{"NUL", `{"a":"\u0000"}`, false},
		{"LoneHigh", `{"a":"cut \ud83d"}`, false},
		{"LoneHighAtEnd", `{"a":"\ud83d`, false},
		{"HighThenText", `{"a":"\ud83dxxxxxx"}`, false},
		{"HighThenHigh", `{"a":"\ud83d\ud83d"}`, false},
		{"LoneLow", `{"a":"\ude00"}`, false},
		{"InvalidUTF8", "{\"a\":\"\xff\"}", false},
		{"TrailingBackslash", `\`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := jsonbTakes([]byte(tt.body)); got != tt.want {
				t.Errorf("jsonbTakes(%s) = %v, want %v", tt.body, got, tt.want)
			}
			_, err := pool.Exec(context.Background(), `SELECT $1::text::jsonb`, tt.body)
			if took := err == nil; took != tt.want {
				t.Errorf("Postgres took %s: %v (%v), want %v", tt.body, took, err, tt.want)
			}
		})
	}
}
