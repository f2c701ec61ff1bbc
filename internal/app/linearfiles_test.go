package app

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// TestLinearImagesReachTheModel: through `weft serve`, a delegation whose
// issue description and comment show uploaded images reaches the model
// with the images as image parts, fetched with the workspace's token from
// the uploads' host (LINEAR_API_URL's, a fake's); an image on another
// host stays text and is never fetched; an upload over
// WEFT_FILE_MAX_BYTES is named, not sent. A follow-up prompt showing an
// image reaches the model with it too.
func TestLinearImagesReachTheModel(t *testing.T) {
	t.Parallel()
	w := newLinearWorldWith(t, map[string]string{"WEFT_FILE_MAX_BYTES": "1000"}, nil)
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\nnot Linear's"))
	}))
	t.Cleanup(other.Close)

	org := lineartest.OrganizationID
	png := []byte("\x89PNG\r\n\x1a\nthe chart, upside down")
	gif := []byte("GIF89a the diagram")
	jpeg := []byte("\xff\xd8\xff\xe0 the fixed chart")
	shot := w.linear.AddUpload(org, "shot", lineartest.Upload{ContentType: "image/png", Content: png})
	diagram := w.linear.AddUpload(org, "diagram", lineartest.Upload{ContentType: "image/gif", Content: gif})
	big := w.linear.AddUpload(org, "big", lineartest.Upload{ContentType: "image/png", Content: append(bytes.Clone(png), make([]byte, 4000)...)})
	fixed := w.linear.AddUpload(org, "fixed", lineartest.Upload{ContentType: "image/jpeg", Content: jpeg})
	outside := other.URL + "/x.png"

	w.llm.Enqueue(llmtest.Reply{Text: "The y axis is inverted."}, llmtest.Reply{Text: "Yes, that one is right."})
	d, s := w.signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(), PromptContext: `<issue identifier="ENG-1">
<title>The dashboard chart is wrong</title>
<description>It looks like this: ![screenshot](` + shot + `) and in full ![huge](` + big + `)
Mockup: ![mockup](` + outside + `)</description>
</issue>
<comment-thread>
<comment author="Ada Lovelace">Expected: ![diagram](` + diagram + `)</comment>
</comment-thread>`})
	w.linear.AddSession(s.SessionID, s.IssueID)
	w.deliver(t, d)
	w.responses(t, s.SessionID, 1)

	first := userMessage(t, w.llm.Requests(), "The dashboard chart is wrong")
	require.Equal(t, []llmtest.Image{{MediaType: "image/png", Data: png}, {MediaType: "image/gif", Data: gif}}, first.Images)
	for _, want := range []string{
		"[attached image screenshot (image/png, 30 B): shown to you below]",
		"[attached image diagram (image/gif, 18 B): shown to you below]",
		"[attached file huge (image/*, size unknown): not read, larger than 1000 B]",
		"![mockup](" + outside + ")",
	} {
		require.Contains(t, first.Content, want)
	}
	require.NotContains(t, first.Content, "attached image mockup")

	w.deliver(t, w.signer.Prompted(s, uuid.NewString(), "Is this one right? ![]("+fixed+")"))
	w.responses(t, s.SessionID, 2)
	follow := userMessage(t, w.llm.Requests(), "Is this one right?")
	require.Equal(t, []llmtest.Image{{MediaType: "image/jpeg", Data: jpeg}}, follow.Images)
	require.Contains(t, follow.Content, "[attached image fixed (image/jpeg, 20 B): shown to you below]")

	require.Zero(t, elsewhere.Load(), "an image on another host is never fetched")
	for _, p := range w.linear.UploadRequests() {
		require.Contains(t, []string{"/uploads/" + org + "/shot", "/uploads/" + org + "/diagram", "/uploads/" + org + "/big", "/uploads/" + org + "/fixed"}, p)
	}
}

// responses waits until the session shows n response activities.
func (w *linearWorld) responses(t *testing.T, session string, n int) {
	t.Helper()
	for i := 1; ; i++ {
		count := 0
		for _, typ := range lineartest.Types(w.activities(t, session, i)) {
			if typ == "response" {
				count++
			}
		}
		if count >= n {
			return
		}
	}
}

// userMessage is the user message of the last of reqs that holds text.
func userMessage(t *testing.T, reqs []llmtest.Request, text string) llmtest.Message {
	t.Helper()
	for i := len(reqs) - 1; i >= 0; i-- {
		for _, m := range reqs[i].Messages {
			if m.Role == "user" && strings.Contains(m.Content, text) {
				return m
			}
		}
	}
	t.Fatalf("no request to the model holds %q", text)
	return llmtest.Message{}
}
