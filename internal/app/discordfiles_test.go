package app

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// TestDiscordAttachmentsReachTheModel: through `weft serve`, a mention
// with an image attached reaches the model with the image as an image
// part; a follow-up that is a text file alone, no words, is answered with
// the file inlined; a file over WEFT_FILE_MAX_BYTES is named, never
// downloaded. Discord's attachment URLs need no token.
func TestDiscordAttachmentsReachTheModel(t *testing.T) {
	t.Parallel()
	w := newDiscordWorldEnv(t, map[string]string{"WEFT_FILE_MAX_BYTES": "1000"})
	png := []byte("\x89PNG\r\n\x1a\nnot really a picture")
	threadID := w.discord.PostUserMessageFiles(w.channel, w.ada, "<@"+w.discord.BotUser().ID+"> what is on this screen?",
		discordtest.File{Name: "screen.png", ContentType: "image/png", Content: png}).ID
	w.sent(t, threadID, 1)
	th, err := w.store.ThreadByDiscordThread(context.Background(), threadID)
	require.NoError(t, err)
	w.settled(t, th.ID)

	w.discord.PostUserMessageFiles(threadID, w.ada, "",
		discordtest.File{Name: "trace.txt", ContentType: "text/plain; charset=utf-8", Content: []byte("panic: nil map")},
		discordtest.File{Name: "core.txt", ContentType: "text/plain", Content: []byte(strings.Repeat("x", 4000))})
	w.sent(t, threadID, 2)
	w.settled(t, th.ID)

	reqs := w.llm.Requests()
	last := reqs[len(reqs)-1]
	var first, follow *llmtest.Message
	for i, m := range last.Messages {
		switch {
		case m.Role != "user":
		case strings.Contains(m.Content, "what is on this screen?"):
			first = &last.Messages[i]
		case strings.Contains(m.Content, "trace.txt"):
			follow = &last.Messages[i]
		}
	}
	require.NotNil(t, first, "the mention never reached the model")
	require.Equal(t, []llmtest.Image{{MediaType: "image/png", Data: png}}, first.Images)
	require.Contains(t, first.Content, "[attached image screen.png (image/png, 28 B): shown to you below]")
	require.NotNil(t, follow, "the file alone never reached the model")
	require.Contains(t, follow.Content, "ada: \n[attached file trace.txt (text/plain, 14 B)]\npanic: nil map\n[end of file trace.txt]")
	require.Contains(t, follow.Content, "[attached file core.txt (text/plain, 3.9 KB): not read, larger than 1000 B]")
	for _, p := range w.discord.FileDownloads() {
		require.NotContains(t, p, "core.txt", "a file over the bound is not downloaded")
	}
}
