package slack

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// deciding is a surface.Approvals answering each decision with its result.
type deciding struct {
	a   *thread.Approval
	err error
	got []surface.ApprovalDecision
}

func (d *deciding) DecideOnPlatform(_ context.Context, r surface.ApprovalDecision) (*thread.Approval, error) {
	d.got = append(d.got, r)
	return d.a, d.err
}

// TestApprovalAction: a click on a request's buttons, as Slack's payload
// carries it, is decided as the Slack user who clicked; a decision stored
// updates the message (who decided, no buttons); a request decided by
// someone else is told to the clicker alone; the clicker's own decision
// delivered again changes nothing and says nothing; someone not among the
// approvers and an unknown request are told so; a decision that could not
// be stored is an error (the click is not acknowledged) with nothing shown.
func TestApprovalAction(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	decided := func(status thread.ApprovalStatus, by, name, via string) *thread.Approval {
		return &thread.Approval{ID: id, Status: status, DecidedBy: by, DecidedName: name, DecidedVia: via}
	}
	tests := []struct {
		name      string
		action    string // the button's action_id; empty: the Approve button's
		a         *thread.Approval
		err       error
		wantErr   bool
		decisions int
		updated   string // in the message once decided; empty: unchanged
		told      string // shown to the clicker alone; empty: nothing
	}{
		{name: "approved", a: decided(thread.ApprovalApproved, "U0ADA", "ada", "slack"), decisions: 1, updated: ":white_check_mark: *Approved* by ada"},
		{name: "decided elsewhere", err: &thread.DecidedError{Approval: decided(thread.ApprovalDenied, "42", "grace", "discord")},
			decisions: 1, told: "This request was already denied by grace."},
		{name: "redelivered", err: &thread.DecidedError{Approval: decided(thread.ApprovalApproved, "U0ADA", "ada", "slack")}, decisions: 1},
		{name: "not an approver", err: thread.ErrNotApprover, decisions: 1, told: "You are not among the people who may approve tool calls here."},
		{name: "unknown request", err: thread.ErrNotFound, decisions: 1, told: "I cannot find this request for approval."},
		{name: "not a request's id", action: slackapi.ApprovalActionPrefix + "nope:approve", told: "I cannot find this request for approval."},
		{name: "not stored", err: errors.New("database down"), decisions: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := slacktest.NewServer(t)
			fake.AddChannel("C1", "channel")
			ada := slacktest.User{ID: "U0ADA", Name: "ada"}
			parent := fake.Post(ada, "C1", "", "<@"+slacktest.BotUserID+"> write a note")
			a, err := New(Config{BotToken: slacktest.BotToken, APIURL: fake.APIURL(), SigningSecret: slacktest.SigningSecret}, nil, nil, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			ap := &deciding{a: tt.a, err: tt.err}
			a.DecideThrough(ap)
			a.Listen(ListenDeps{Recorder: &answering{}})
			o := thread.Outbox{ID: uuid.New(), Platform: thread.PlatformSlack, Kind: thread.OutboxElicitation,
				Target: thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: parent.TS}.String(), Attempts: 1, CreatedAt: time.Now(),
				Body: thread.OutboxBody{Text: "weft wants to call write_note on the MCP server notes", Options: []string{"Approve", "Deny"},
					Approval: &thread.ApprovalAsk{ID: id, Server: "notes", Tool: "write_note"}}.JSON()}
			ts, err := a.sender.Send(t.Context(), o)
			require.NoError(t, err)
			msg := fake.Thread("C1", parent.TS)[1]
			require.Equal(t, ts, msg.TS)
			click, err := fake.BlockAction(ada, msg, slackapi.ApprovalActionID(id.String(), slackapi.ApprovalApprove), slackapi.ApprovalApprove)
			require.NoError(t, err)
			if tt.action != "" {
				click["actions"].([]map[string]any)[0]["action_id"] = tt.action
			}
			payload, err := json.Marshal(click)
			require.NoError(t, err)

			_, err = a.interact.Interactive(t.Context(), payload)
			if tt.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, ap.got, tt.decisions)
			if tt.decisions > 0 {
				require.Equal(t, surface.ApprovalDecision{ApprovalID: id, Decision: thread.Approve,
					User: thread.Author{ID: ada.ID, Name: "ada"}, Platform: thread.PlatformSlack}, ap.got[0])
			}
			now := fake.Thread("C1", parent.TS)[1]
			if tt.updated == "" {
				require.Equal(t, msg.Text, now.Text, "the message is unchanged")
				require.Equal(t, string(msg.Blocks), string(now.Blocks))
			} else {
				require.Equal(t, msg.Text+"\n\n"+tt.updated, now.Text)
				require.Contains(t, string(now.Blocks), tt.updated)
				require.Contains(t, string(now.Blocks), "write_note")
				require.NotContains(t, string(now.Blocks), `"actions"`, "the buttons are gone")
			}
			eph := fake.Ephemerals()
			if tt.told == "" {
				require.Empty(t, eph)
				return
			}
			require.Len(t, eph, 1)
			require.Equal(t, slacktest.Ephemeral{Channel: "C1", ThreadTS: parent.TS, User: ada.ID, Text: tt.told}, eph[0])
		})
	}
}

// TestDecidedLine: who decided, and where when not in Slack.
func TestDecidedLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, ":white_check_mark: *Approved* by ada",
		DecidedLine(&thread.Approval{Status: thread.ApprovalApproved, DecidedBy: "U1", DecidedName: "ada", DecidedVia: "slack"}))
	require.Equal(t, ":no_entry_sign: *Denied* by &lt;op&gt; (console)",
		DecidedLine(&thread.Approval{Status: thread.ApprovalDenied, DecidedBy: "<op>", DecidedVia: "console"}))
	require.False(t, strings.Contains(DecidedLine(&thread.Approval{Status: thread.ApprovalApproved, DecidedBy: "x"}), "()"))
}
