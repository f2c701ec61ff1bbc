package slack_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weft-dev/weft/internal/slack"
)

func TestSplit(t *testing.T) {
	para := strings.Repeat("word ", 30) // 150 characters
	code := "```go\n" + strings.Repeat("x := 1\n", 40) + "```"
	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"short", "hello", 100, []string{"hello"}},
		{"paragraphs", "one two\n\nthree four", 12, []string{"one two", "three four"}},
		{"lines", "aaaa\nbbbb\ncccc", 10, []string{"aaaa\nbbbb", "cccc"}},
		{"words", "aaaa bbbb cccc", 10, []string{"aaaa bbbb", "cccc"}},
		{"hard cut", strings.Repeat("é", 25), 10, []string{strings.Repeat("é", 10), strings.Repeat("é", 10), strings.Repeat("é", 5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slack.Split(tt.text, tt.limit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("Split = %q, want %q", got, tt.want)
			}
		})
	}
	// Long answers: every part fits, fences balance in each part, and
	// nothing but the cut whitespace and the added fences is lost.
	for _, text := range []string{para + "\n\n" + code + "\n\n" + para, code + code, strings.Repeat(para+"\n", 40)} {
		parts := slack.Split(text, 120)
		var joined strings.Builder
		for _, p := range parts {
			if n := utf8.RuneCountInString(p); n > 120 {
				t.Fatalf("part of %d characters: %q", n, p)
			}
			if strings.Count(p, "```")%2 != 0 {
				t.Fatalf("unbalanced fences in %q", p)
			}
			joined.WriteString(p)
		}
		strip := func(s string) string {
			s = strings.ReplaceAll(s, "```go", "")
			s = strings.ReplaceAll(s, "```", "")
			return strings.Join(strings.Fields(s), "")
		}
		if strip(joined.String()) != strip(text) {
			t.Fatalf("text changed by splitting")
		}
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a & b < c > d", "a &amp; b &lt; c &gt; d"},
		{"<!channel> look", "&lt;!channel&gt; look"},
		{"<!here> <@U123> <!subteam^S1>", "&lt;!here&gt; &lt;@U123&gt; &lt;!subteam^S1&gt;"},
		{"hey @channel and @here and @everyone", "hey @\u2060channel and @\u2060here and @\u2060everyone"},
		{"plain *bold* `code`", "plain *bold* `code`"},
	}
	for _, tt := range tests {
		if got := slack.Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
