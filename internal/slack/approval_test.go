package slack_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// block is what the tests read of a posted block.
type block struct {
	Type     string                 `json:"type"`
	BlockID  string                 `json:"block_id"`
	Text     *struct{ Text string } `json:"text"`
	Elements []struct {
		Type     string                `json:"type"`
		ActionID string                `json:"action_id"`
		Value    string                `json:"value"`
		Style    string                `json:"style"`
		Text     struct{ Text string } `json:"text"`
	} `json:"elements"`
}

// TestSenderApprovalButtons: a request for approval goes out as Block Kit
// (its text in a section, the server, tool and arguments shown) with
// Approve (primary) and Deny (danger) buttons naming the request, and no
// numbered options; without buttons (no way for a click to reach weft) it
// is text with the options to reply with; an ordinary question never has
// the buttons.
func TestSenderApprovalButtons(t *testing.T) {
	id := uuid.New()
	text := "weft wants to call write_note on the MCP server notes with:\n```\n{\n  \"text\": \"a < b\"\n}\n```\nApprove or deny?"
	approval := thread.OutboxBody{Text: text, Options: []string{"Approve", "Deny"},
		Approval: &thread.ApprovalAsk{ID: id, Server: "notes", Tool: "write_note", Arguments: `{"text": "a < b"}`}}
	tests := []struct {
		name    string
		buttons bool
		body    thread.OutboxBody
		want    bool // the buttons are there
		list    bool // the options are listed in the text
	}{
		{"approval with buttons", true, approval, true, false},
		{"approval without buttons", false, approval, false, true},
		{"question", true, thread.OutboxBody{Text: "Which one?", Options: []string{"A", "B"}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := slacktest.NewServer(t)
			srv.AddChannel("C1", "channel")
			parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "question")
			s := slack.NewSender(newWorkspaces(t, srv), slack.WithApprovalButtons(tt.buttons), slack.WithFeedback(true))
			o := thread.Outbox{ID: uuid.New(), Platform: thread.PlatformSlack, Kind: thread.OutboxElicitation, Body: tt.body.JSON(),
				Target: thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: parent.TS}.String(), Attempts: 1, CreatedAt: time.Now()}
			if _, err := s.Send(t.Context(), o); err != nil {
				t.Fatal(err)
			}
			got := srv.BotMessages("C1")
			if len(got) != 1 {
				t.Fatalf("posted %d messages, want 1", len(got))
			}
			m := got[0]
			if listed := strings.Contains(m.Text, "1. "); listed != tt.list {
				t.Errorf("options listed = %v, want %v: %q", listed, tt.list, m.Text)
			}
			if !tt.want {
				if strings.Contains(string(m.Blocks), slack.ApprovalActionPrefix) {
					t.Fatalf("approval buttons where none belong: %s", m.Blocks)
				}
				return
			}
			var blocks []block
			if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
				t.Fatal(err)
			}
			if len(blocks) != 2 || blocks[0].Type != "section" || blocks[1].Type != "actions" {
				t.Fatalf("blocks %s, want a section and an actions block", m.Blocks)
			}
			if sec := blocks[0].Text.Text; !strings.Contains(sec, "write_note") || !strings.Contains(sec, "notes") || !strings.Contains(sec, "a &lt; b") {
				t.Errorf("section %q does not show the call, escaped", sec)
			}
			if blocks[1].BlockID != slack.ApprovalBlockPrefix+id.String() {
				t.Errorf("block_id %q", blocks[1].BlockID)
			}
			els := blocks[1].Elements
			if len(els) != 2 {
				t.Fatalf("%d buttons, want 2", len(els))
			}
			want := []struct{ action, value, style, label string }{
				{"weft_approval:" + id.String() + ":approve", "approve", "primary", "Approve"},
				{"weft_approval:" + id.String() + ":deny", "deny", "danger", "Deny"},
			}
			for i, w := range want {
				e := els[i]
				if e.Type != "button" || e.ActionID != w.action || e.Value != w.value || e.Style != w.style || e.Text.Text != w.label {
					t.Errorf("button %d = %+v, want %+v", i, e, w)
				}
			}
		})
	}
}

func TestParseApprovalActionID(t *testing.T) {
	tests := []struct {
		in           string
		id, decision string
		ok           bool
	}{
		{"weft_approval:abc:approve", "abc", "approve", true},
		{"weft_approval:abc:deny", "abc", "deny", true},
		{"weft_approval:abc:maybe", "", "", false},
		{"weft_approval::approve", "", "", false},
		{"weft_approval:abc", "", "", false},
		{"weft_feedback", "", "", false},
	}
	for _, tt := range tests {
		id, d, ok := slack.ParseApprovalActionID(tt.in)
		if id != tt.id || d != tt.decision || ok != tt.ok {
			t.Errorf("ParseApprovalActionID(%q) = %q, %q, %v", tt.in, id, d, ok)
		}
	}
}
