package llmtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPieces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		chunk int
		want  []string
	}{
		{name: "Empty", text: "", want: nil},
		{name: "Words", text: "one  two three", want: []string{"one  ", "two ", "three"}},
		{name: "TrailingSpace", text: "a b ", want: []string{"a ", "b "}},
		{name: "Runes", text: "héllo", chunk: 2, want: []string{"hé", "ll", "o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, pieces(tt.text, tt.chunk))
		})
	}
}

// TestStreamWire checks each protocol's stream on the wire: how it ends
// when whole, and that a cut one lacks that end.
func TestStreamWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, body, end string
		delta                 string // what each text delta looks like
	}{
		{name: "openai", path: "/v1/chat/completions", body: `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			end: "data: [DONE]\n\n", delta: `"delta":{"content":"two "}`},
		{name: "anthropic", path: "/v1/messages", body: `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			end: "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", delta: `"delta":{"text":"two ","type":"text_delta"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(t)
			s.Enqueue(Reply{Text: "one two three"}, Reply{Text: "one two three", CutAfter: 1})

			whole := post(t.Context(), s.URL()+tt.path, tt.body)
			require.NoError(t, whole.err)
			require.Equal(t, "text/event-stream", whole.header.Get("Content-Type"))
			require.True(t, strings.HasSuffix(whole.body, tt.end), whole.body)
			require.Contains(t, whole.body, tt.delta)
			require.True(t, s.Requests()[0].Stream)

			cut := post(t.Context(), s.URL()+tt.path, tt.body)
			require.Contains(t, cut.body, "one ")
			require.NotContains(t, cut.body, "two ")
			require.NotContains(t, cut.body, tt.end)
		})
	}
}
