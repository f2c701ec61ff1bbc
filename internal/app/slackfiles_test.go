package app

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
)

// TestSlackFilesReachTheModel: through `weft serve`, a mention sharing an
// image, a text file, a text file over WEFT_FILE_MAX_BYTES and a PDF
// reaches the model as the image (an image part of the request) and the
// text inlined, the other two named with their type and size; the
// oversized file and the PDF are never downloaded, and the two that are
// are fetched with the bot token.
func TestSlackFilesReachTheModel(t *testing.T) {
	t.Parallel()
	w := newSlackWorldEnv(t, false, map[string]string{"WEFT_FILE_MAX_BYTES": "1000"})
	png := []byte("\x89PNG\r\n\x1a\nnot really a picture")
	q := w.slack.PostFiles(w.ada, w.channel, "", "<@"+slacktest.BotUserID+"> what do these say?",
		slacktest.File{Name: "screen.png", Mimetype: "image/png", Content: png},
		slacktest.File{Name: "notes.txt", Mimetype: "text/plain", Content: []byte("the build is red since Tuesday")},
		slacktest.File{Name: "huge.log", Mimetype: "text/plain", Content: []byte(strings.Repeat("x", 5000))},
		slacktest.File{Name: "deck.pdf", Mimetype: "application/pdf", Content: []byte("%PDF-1.7"), Size: 2 << 20})
	w.answers(t, q.TS, 1)
	w.settled(t, w.thread(t, q.TS).ID)

	var got *llmtest.Message
	for _, r := range w.llm.Requests() {
		for i, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "what do these say?") {
				got = &r.Messages[i]
			}
		}
	}
	require.NotNil(t, got, "the mention never reached the model")
	require.Equal(t, []llmtest.Image{{MediaType: "image/png", Data: png}}, got.Images)
	for _, want := range []string{
		"[attached image screen.png (image/png, 28 B): shown to you below]",
		"[attached file notes.txt (text/plain, 30 B)]\nthe build is red since Tuesday\n[end of file notes.txt]",
		"[attached file huge.log (text/plain, 4.9 KB): not read, larger than 1000 B]",
		"[attached file deck.pdf (application/pdf, 2.0 MB): not shown to you]",
	} {
		require.Contains(t, got.Content, want)
	}

	var paths []string
	for _, d := range w.slack.FileDownloads() {
		require.Equal(t, slacktest.BotToken, d.Token, "url_private is fetched with the bot token")
		paths = append(paths, d.Form.Get("path"))
	}
	require.NotEmpty(t, paths)
	for _, p := range paths {
		require.True(t, strings.HasSuffix(p, "/screen.png") || strings.HasSuffix(p, "/notes.txt"), "downloaded %s", p)
	}
}
