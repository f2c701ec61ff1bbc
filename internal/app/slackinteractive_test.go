package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// interactiveToken is the API token of the interactive worlds, for
// /metrics and the console.
const interactiveToken = "interactive-token"

// newInteractiveWorld is a slackWorld whose fake sends slash commands and
// clicks to weft's doors (over the socket, with socket set).
func newInteractiveWorld(t *testing.T, socket bool) *slackWorld {
	t.Helper()
	w := newSlackWorldEnv(t, socket, map[string]string{"WEFT_API_TOKEN": interactiveToken})
	w.slack.InteractTo(w.base+"/webhooks/slack/commands", w.base+"/webhooks/slack/interactions")
	return w
}

// feedbacks are the thread's feedback stitches.
func (w *slackWorld) feedbacks(t *testing.T, id uuid.UUID) []thread.Stitch {
	return w.stitches(t, id, func(s thread.Stitch) bool { return s.Type == thread.StitchFeedback })
}

// metric is the value of a series line in weft's /metrics ("" when absent).
func (w *slackWorld) metric(t *testing.T, series string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.base+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+interactiveToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestSlackFeedback: an answer carries Slack's feedback buttons; a click,
// over the interactivity door or the socket, is a feedback stitch by the
// person's name in the answer's thread, counted in weft_feedback_total,
// shown on the console's thread page, and starting no turn; the same
// click delivered again changes nothing.
func TestSlackFeedback(t *testing.T) {
	t.Parallel()
	overHTTPAndSocket(t, func(t *testing.T, socket bool) {
		w := newInteractiveWorld(t, socket)
		q := w.mention("what is 2 + 2?")
		answer := w.answers(t, q.TS, 1)[0]
		th := w.thread(t, q.TS)
		w.settled(t, th.ID)
		require.Equal(t, "Answer to: what is 2 + 2?", answer.Text, "the text stays, for notifications")
		require.Contains(t, string(answer.Blocks), `"context_actions"`)
		calls := w.llm.Calls()

		click, err := w.slack.FeedbackClick(w.ada, answer, true)
		require.NoError(t, err)
		reply, err := w.slack.Interact(click, 0)
		require.NoError(t, err)
		require.True(t, reply.Acked, "%+v", reply)
		got := w.feedbacks(t, th.ID)
		require.Len(t, got, 1)
		require.Equal(t, "👍 Good answer", got[0].Content)
		require.Equal(t, thread.PlatformSlack, got[0].Source)
		require.Equal(t, &thread.Author{ID: w.ada.ID, Name: "ada"}, got[0].Author)
		var meta struct{ Feedback, OutboxID, MessageTS string }
		require.NoError(t, json.Unmarshal(got[0].Metadata, &struct {
			Feedback  *string `json:"feedback"`
			OutboxID  *string `json:"outbox_id"`
			MessageTS *string `json:"message_ts"`
		}{&meta.Feedback, &meta.OutboxID, &meta.MessageTS}))
		require.Equal(t, "positive", meta.Feedback)
		require.Equal(t, answer.TS, meta.MessageTS)
		require.NotEmpty(t, meta.OutboxID)
		require.Equal(t, "1", w.metric(t, `weft_feedback_total{platform="slack",value="positive"}`))

		// Slack sends the click again: nothing new.
		reply, err = w.slack.Interact(click, 1)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		require.Len(t, w.feedbacks(t, th.ID), 1)
		require.Equal(t, "1", w.metric(t, `weft_feedback_total{platform="slack",value="positive"}`))

		click, err = w.slack.FeedbackClick(w.ada, answer, false)
		require.NoError(t, err)
		reply, err = w.slack.Interact(click, 0)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		got = w.feedbacks(t, th.ID)
		require.Len(t, got, 2)
		require.Equal(t, "👎 Bad answer", got[1].Content)
		require.Equal(t, "1", w.metric(t, `weft_feedback_total{platform="slack",value="negative"}`))
		w.settled(t, th.ID)
		require.Equal(t, calls, w.llm.Calls(), "feedback starts no turn")

		// The console's thread page shows it.
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		c := &http.Client{Jar: jar}
		resp, err := c.Get(w.base + "/console/login?token=" + url.QueryEscape(interactiveToken))
		require.NoError(t, err)
		resp.Body.Close()
		resp, err = c.Get(w.base + "/console/threads/" + th.ID.String())
		require.NoError(t, err)
		page, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(page), "t-feedback")
		require.Contains(t, string(page), "👍 Good answer")
		require.Contains(t, string(page), "👎 Bad answer")
	})
}

// TestSlackInteractivity: /weft and a block action work the same over the
// HTTP doors and over Socket Mode: /weft's usage and /weft stop answer in
// the acknowledgement, and a block action nobody registered is
// acknowledged and writes nothing.
func TestSlackInteractivity(t *testing.T) {
	t.Parallel()
	overHTTPAndSocket(t, func(t *testing.T, socket bool) {
		w := newInteractiveWorld(t, socket)
		ctx := context.Background()
		reply, err := w.slack.Command(w.ada, w.channel, "help")
		require.NoError(t, err)
		require.True(t, reply.Acked, "%+v", reply)
		var text struct{ ResponseType, Text string }
		require.NoError(t, json.Unmarshal(reply.Body, &struct {
			ResponseType *string `json:"response_type"`
			Text         *string `json:"text"`
		}{&text.ResponseType, &text.Text}))
		require.Equal(t, "ephemeral", text.ResponseType)
		require.Contains(t, text.Text, "Usage")

		q := w.mention("hello")
		answer := w.answers(t, q.TS, 1)[0]
		th := w.thread(t, q.TS)
		w.settled(t, th.ID)
		link := "https://slacktest.slack.com/archives/" + w.channel + "/p" + strings.ReplaceAll(q.TS, ".", "")
		reply, err = w.slack.Command(w.ada, w.channel, "stop "+link)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		require.Contains(t, string(reply.Body), "Stopped")
		got, err := w.store.Thread(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.StatusAborted, got.Status)

		// A button of weft's message that no feature registered. Only
		// actions are counted: an event Slack delivers meanwhile (the
		// stop's own message) writes its row.
		const actions = "SELECT count(*) FROM webhook_deliveries WHERE event_type LIKE 'block_actions%'"
		var n0 int
		require.NoError(t, w.store.Pool().QueryRow(ctx, actions).Scan(&n0))
		click, err := w.slack.FeedbackClick(w.ada, answer, true)
		require.NoError(t, err)
		click["actions"].([]map[string]any)[0]["action_id"] = "someone_elses_button"
		reply, err = w.slack.Interact(click, 0)
		require.NoError(t, err)
		require.True(t, reply.Acked)
		var n int
		require.NoError(t, w.store.Pool().QueryRow(ctx, actions).Scan(&n))
		require.Equal(t, n0, n, "an action nobody handles writes nothing")
		require.Empty(t, w.feedbacks(t, th.ID))
	})
}

// TestSlackInteractionsDoorRejects: forged, unsigned, stale, altered,
// truncated, malformed and oversized requests to the interactivity door
// get 4xx and write nothing.
func TestSlackInteractionsDoorRejects(t *testing.T) {
	t.Parallel()
	w := newInteractiveWorld(t, false)
	ctx := context.Background()
	q := w.mention("hello")
	answer := w.answers(t, q.TS, 1)[0]
	th := w.thread(t, q.TS)
	w.settled(t, th.ID)
	click, err := w.slack.FeedbackClick(w.ada, answer, true)
	require.NoError(t, err)
	payload, err := json.Marshal(click)
	require.NoError(t, err)
	good := []byte(url.Values{"payload": {string(payload)}}.Encode())
	var before int
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&before))

	now := time.Now()
	form := func(h http.Header) http.Header {
		h = h.Clone()
		h.Set("Content-Type", "application/x-www-form-urlencoded")
		return h
	}
	truncated := good[:len(good)/2]
	notJSON := []byte(url.Values{"payload": {"{not json"}}.Encode())
	noActions := []byte(url.Values{"payload": {`{"type":"block_actions","team":{"id":"T0SLACKTEST"},"user":{"id":"U0ADA"}}`}}.Encode())
	big := bytes.Repeat([]byte("x"), 2<<20)
	tests := []struct {
		name   string
		body   []byte
		header http.Header
		status int
	}{
		{"forged", good, form(slacktest.SignWith("not-the-secret", good, now)), http.StatusUnauthorized},
		{"unsigned", good, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, http.StatusUnauthorized},
		{"stale", good, form(slacktest.Sign(good, now.Add(-6*time.Minute))), http.StatusUnauthorized},
		{"replayed from later", good, form(slacktest.Sign(good, now.Add(6*time.Minute))), http.StatusUnauthorized},
		{"body changed", append(bytes.Clone(good), '&'), form(slacktest.Sign(good, now)), http.StatusUnauthorized},
		{"truncated", truncated, form(slacktest.Sign(truncated, now)), http.StatusBadRequest},
		{"not json", notJSON, form(slacktest.Sign(notJSON, now)), http.StatusBadRequest},
		{"no payload", []byte("a=b"), form(slacktest.Sign([]byte("a=b"), now)), http.StatusBadRequest},
		{"no actions", noActions, form(slacktest.Sign(noActions, now)), http.StatusBadRequest},
		{"oversized", big, form(slacktest.Sign(big, now)), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/slack/interactions", bytes.NewReader(tt.body))
		require.NoError(t, err)
		req.Header = tt.header
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, tt.status, resp.StatusCode, tt.name)
	}
	var after int
	require.NoError(t, w.store.Pool().QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&after))
	require.Equal(t, before, after, "a refused request writes nothing")
	require.Empty(t, w.feedbacks(t, th.ID))
	require.Equal(t, "", w.metric(t, `weft_feedback_total{platform="slack",value="positive"}`))
}

// TestSlackAssistantThread: through weft serve, opening an assistant
// thread offers WEFT_SLACK_SUGGESTED_PROMPTS in it, and opening the
// messages tab at its top; a question in the thread is answered there,
// the thread titled with its goal and its status shown with loading
// messages while the turn runs.
func TestSlackAssistantThread(t *testing.T) {
	t.Parallel()
	w := newSlackWorldSetup(t, false, func(s *slacktest.Server) map[string]string {
		s.AddChannel("D0ADA", "im")
		return map[string]string{"WEFT_SLACK_SUGGESTED_PROMPTS": "Deploys=How do I deploy? | What changed this week?",
			"WEFT_SLACK_SUGGESTED_PROMPTS_TITLE": "Ask weft"}
	})
	root := w.slack.AssistantThreadStarted(w.ada, "D0ADA")
	w.slack.AppHomeOpened(w.ada, "D0ADA", "messages")
	want := []slacktest.Prompt{{Title: "Deploys", Message: "How do I deploy?"}, {Title: "What changed this week?", Message: "What changed this week?"}}
	require.Eventually(t, func() bool { return len(w.slack.SuggestedPrompts()) == 2 }, 30*time.Second, 10*time.Millisecond)
	require.ElementsMatch(t, []slacktest.Prompts{
		{Channel: "D0ADA", ThreadTS: root, Title: "Ask weft", Prompts: want}, // the assistant thread's
		{Channel: "D0ADA", Title: "Ask weft", Prompts: want},                 // the messages tab's
	}, w.slack.SuggestedPrompts(), "the events are delivered concurrently")

	w.slack.Post(w.ada, "D0ADA", root, "How do I deploy?")
	require.Eventually(t, func() bool {
		for _, m := range w.slack.BotMessages("D0ADA") {
			if m.ThreadTS == root && m.TS != root {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "no answer in the assistant thread")
	require.Contains(t, w.slack.Titles(), slacktest.Title{Channel: "D0ADA", ThreadTS: root, Title: "How do I deploy?"})
	var loading bool
	for _, s := range w.slack.Statuses() {
		if s.Channel == "D0ADA" && s.ThreadTS == root && s.Status == "is thinking…" && len(s.LoadingMessages) > 0 {
			loading = true
		}
	}
	require.True(t, loading, "no status with loading messages: %+v", w.slack.Statuses())
}
