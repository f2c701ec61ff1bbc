package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// interactions records what the socket hands it; fail makes Interactive
// fail without recording.
type interactions struct {
	mu       sync.Mutex
	commands []string
	clicks   []string
	fail     error
}

func (h *interactions) SlashCommand(_ context.Context, p json.RawMessage) (any, error) {
	var c struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(p, &c); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.commands = append(h.commands, c.Text)
	return map[string]string{"response_type": "ephemeral", "text": "you said " + c.Text}, nil
}

func (h *interactions) Interactive(_ context.Context, p json.RawMessage) (any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return nil, h.fail
	}
	var in struct {
		Actions []struct {
			ActionID string `json:"action_id"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(p, &in); err != nil || len(in.Actions) == 0 {
		return nil, slack.ErrMalformed
	}
	h.clicks = append(h.clicks, in.Actions[0].ActionID)
	return nil, nil
}

// TestSocketInteractions: over Socket Mode, through slack-go's socketmode
// client, a slash command's reply goes back in its ack and a block
// action reaches the handler and is acked; a click the handler failed to
// record is left unacknowledged, for Slack to send again, and a malformed
// one is acknowledged.
func TestSocketInteractions(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.EnableSocketMode()
	srv.AddChannel("C1", "channel")
	ws := newWorkspaces(t, srv)
	conv := slack.NewConversations(ws, &fresh{}, logtest.New(t))
	h := &interactions{}
	sock := slack.NewSocket(slack.Config{AppToken: slacktest.AppToken, APIURL: srv.APIURL()}, conv, logtest.New(t), slack.WithInteractions(h))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sock.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	if _, err := srv.WaitCalls(t.Context(), "apps.connections.open", 1); err != nil {
		t.Fatal(err)
	}
	wait, stopWaiting := context.WithTimeout(t.Context(), 30*time.Second)
	defer stopWaiting()
	if err := srv.Wait(wait, srv.SocketConnected); err != nil {
		t.Fatalf("the socket never connected: %v", err)
	}
	ada := slacktest.User{ID: "U0ADA", Name: "ada"}
	reply, err := srv.Command(ada, "C1", "help me")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Via != "socket" || !strings.Contains(string(reply.Body), "you said help me") {
		t.Fatalf("slash command reply %+v", reply)
	}

	answer, err := ws.Client(t.Context(), slacktest.TeamID)
	if err != nil {
		t.Fatal(err)
	}
	parent := srv.Post(ada, "C1", "", "question")
	if _, err := answer.PostMessage(t.Context(), slack.Post{Channel: "C1", ThreadTS: parent.TS, Text: "answer",
		Blocks: slack.AnswerBlocks("answer", "row-1")}); err != nil {
		t.Fatal(err)
	}
	posted := srv.BotMessages("C1")[0]
	click, err := srv.FeedbackClick(ada, posted, true)
	if err != nil {
		t.Fatal(err)
	}
	if reply, err = srv.Interact(click, 0); err != nil || !reply.Acked {
		t.Fatalf("click: %+v %v", reply, err)
	}
	h.mu.Lock()
	clicks := append([]string(nil), h.clicks...)
	h.fail = errors.New("database down")
	h.mu.Unlock()
	if len(clicks) != 1 || clicks[0] != slack.FeedbackActionID {
		t.Fatalf("clicks %v", clicks)
	}
	if reply, err = srv.Interact(click, 1); err != nil || reply.Acked {
		t.Fatalf("a click not recorded was acked: %+v %v", reply, err)
	}
	h.mu.Lock()
	h.fail = nil
	h.mu.Unlock()
	if reply, err = srv.Interact(slacktest.Interaction{"type": "block_actions"}, 0); err != nil || !reply.Acked {
		t.Fatalf("a malformed click was not acked: %+v %v", reply, err)
	}
}

// TestSenderFeedbackButtons: with feedback on, an answer's last part
// carries the context_actions block of feedback_buttons naming its
// outbox row (its text in sections within Slack's 3,000); earlier parts,
// echoes and errors carry none, nor anything with feedback off.
func TestSenderFeedbackButtons(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "question")
	target := thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: parent.TS}.String()
	on := slack.NewSender(newWorkspaces(t, srv), slack.WithFeedback(true))
	para := strings.Repeat("word ", 700)
	long := outboxRow(t, target, para+"\n\n"+para, 1)
	if _, err := on.Send(t.Context(), long); err != nil {
		t.Fatal(err)
	}
	echo := outboxRow(t, target, "echoed", 1)
	echo.Body = thread.OutboxBody{Text: "echoed", Echo: true}.JSON()
	failed := outboxRow(t, target, "it broke", 1)
	failed.Kind = thread.OutboxError
	for _, o := range []thread.Outbox{echo, failed} {
		if _, err := on.Send(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := slack.NewSender(newWorkspaces(t, srv)).Send(t.Context(), outboxRow(t, target, "plain", 1)); err != nil {
		t.Fatal(err)
	}
	got := srv.BotMessages("C1")
	if len(got) != 5 {
		t.Fatalf("%d posts, want 5", len(got))
	}
	for i, m := range got {
		if (len(m.Blocks) > 0) != (i == 1) {
			t.Fatalf("post %d (%q…): blocks %s", i, m.Text[:min(len(m.Text), 20)], m.Blocks)
		}
	}
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
		Text    *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Positive struct {
				Value string `json:"value"`
			} `json:"positive_button"`
			Negative struct {
				Value string `json:"value"`
			} `json:"negative_button"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(got[1].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	last := blocks[len(blocks)-1]
	if last.Type != "context_actions" || last.BlockID != slack.FeedbackBlockPrefix+long.ID.String() || len(last.Elements) != 1 ||
		last.Elements[0].Type != "feedback_buttons" || last.Elements[0].ActionID != slack.FeedbackActionID ||
		last.Elements[0].Positive.Value != slack.FeedbackPositive || last.Elements[0].Negative.Value != slack.FeedbackNegative {
		t.Fatalf("feedback block %+v", last)
	}
	var text strings.Builder
	for _, b := range blocks[:len(blocks)-1] {
		if b.Type != "section" || b.Text == nil || b.Text.Type != "mrkdwn" || len(b.Text.Text) > 3000 {
			t.Fatalf("text block %+v", b)
		}
		text.WriteString(b.Text.Text + "\n")
	}
	if a, b := strings.Join(strings.Fields(text.String()), " "), strings.Join(strings.Fields(got[1].Text), " "); a != b {
		t.Fatalf("the sections (%d) do not hold the part's text (%d)", len(a), len(b))
	}
}
