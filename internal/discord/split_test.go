package discord

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{name: "Empty", text: "", limit: 20, want: []string{}},
		{name: "FitsUnchanged", text: "hello world", limit: 20, want: []string{"hello world"}},
		{name: "ExactlyAtLimit", text: strings.Repeat("a", 20), limit: 20, want: []string{strings.Repeat("a", 20)}},
		{
			name:  "PrefersParagraph",
			text:  "first para.\n\nsecond line\nthird",
			limit: 24,
			want:  []string{"first para.\n\n", "second line\nthird"},
		},
		{
			name:  "ThenLine",
			text:  "one two three\nfour five six",
			limit: 20,
			want:  []string{"one two three\n", "four five six"},
		},
		{
			name:  "ThenSpace",
			text:  "alpha beta gamma delta",
			limit: 16,
			want:  []string{"alpha beta ", "gamma delta"},
		},
		{
			name:  "HardCutBetweenRunes",
			text:  strings.Repeat("é", 20),
			limit: 16,
			want:  []string{strings.Repeat("é", 12), strings.Repeat("é", 8)},
		},
		{
			name:  "EarlyBoundaryIgnored",
			text:  "ab cdefghijklmnopqrstuvwxyz",
			limit: 16,
			want:  []string{"ab cdefghijk", "lmnopqrstuvwxyz"},
		},
		{
			name:  "FenceClosedAndReopenedWithLanguageAndOriginalCloseKept",
			text:  "intro\n```go\nline one\nline two\nline three\n```\nafter",
			limit: 30,
			want: []string{
				"intro\n```go\nline one\n```",
				"```go\nline two\nline three\n```\n",
				"after",
			},
		},
		{
			name:  "ClosedFenceNotReopened",
			text:  "```\nab\n```\nplain text that goes on",
			limit: 20,
			want:  []string{"```\nab\n```\n", "plain text that ", "goes on"},
		},
		{
			name:  "LimitRaisedToMinimum",
			text:  "abcdefghijklmnopqrstu",
			limit: 1,
			want:  []string{"abcdefghijkl", "mnopqrstu"},
		},
		{
			name:  "NoPartEndsWithAnOpener",
			text:  "aaaa bbbb\n```\ncode code code\n```",
			limit: 20,
			want:  []string{"aaaa bbbb\n", "```\ncode code \n```", "```\ncode\n```"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Split(tt.text, tt.limit)
			require.Equal(t, tt.want, got)
			requireWellFormedParts(t, tt.text, max(tt.limit, minSplitLimit))
		})
	}
}

func TestSplitLongReplyWithCodeFence(t *testing.T) {
	t.Parallel()

	var b strings.Builder
	b.WriteString("Here is the fix.\n\n```python\n")
	for i := 0; b.Len() < 4000; i++ {
		b.WriteString("print('line number ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("')\n")
	}
	b.WriteString("```\n\nThat should do it. ")
	b.WriteString(strings.Repeat("More words follow here. ", 20))
	text := b.String()

	parts := Split(text, MessageLimit)
	require.Len(t, parts, 3)
	require.True(t, strings.HasPrefix(parts[1], "```python\n"), "reopens with the language tag")
	require.True(t, strings.HasSuffix(parts[0], "\n```"), "closes the fence it cut")
	requireWellFormedParts(t, text, MessageLimit)
}

// requireWellFormedParts checks that every part fits and has balanced fences,
// so each renders on its own, and that the chunks give back the text.
func requireWellFormedParts(t *testing.T, text string, limit int) {
	t.Helper()
	var joined strings.Builder
	for _, c := range splitChunks(text, limit) {
		part := c.render()
		require.LessOrEqual(t, utf8.RuneCountInString(part), limit)
		fences := 0
		for line := range strings.Lines(part) {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), fenceMarker) {
				fences++
			}
		}
		require.Zero(t, fences%2, "part has an unclosed fence: %q", part)
		joined.WriteString(c.body)
	}
	require.Equal(t, text, joined.String())
}

func FuzzSplit(f *testing.F) {
	f.Add("hello\n\nworld", uint16(16))
	f.Add("```go\nfunc main() {}\n```\n", uint16(17))
	f.Add(strings.Repeat("日本語 ", 900), uint16(2000))
	f.Add("```"+strings.Repeat("x", 60)+"\n"+strings.Repeat("y\n", 40), uint16(20))
	f.Add("\xff\xfe```\n\x80", uint16(16))
	f.Fuzz(func(t *testing.T, text string, rawLimit uint16) {
		limit := int(rawLimit % 2100)
		effective := max(limit, minSplitLimit)
		chunks := splitChunks(text, limit)
		parts := Split(text, limit)
		require.Len(t, parts, len(chunks))

		var joined strings.Builder
		for i, c := range chunks {
			require.NotEmpty(t, c.body, "every part carries original text")
			require.Equal(t, parts[i], c.render())
			require.LessOrEqual(t, utf8.RuneCountInString(parts[i]), effective)
			if utf8.ValidString(text) {
				require.True(t, utf8.ValidString(parts[i]), "part %d cuts a rune", i)
			}
			require.Equal(t, i > 0 && chunks[i-1].close, c.reopen != "", "reopen iff the previous part closed a fence")
			joined.WriteString(c.body)
		}
		require.Equal(t, text, joined.String(), "bodies rejoin to the original")
	})
}
