package discord_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/thread"
)

// A click on an approval request's Approve button decides it as the
// person who clicked: stored first, then the message updated to say who
// decided, its buttons gone. A second person's click is told who decided,
// a replayed click or a forged one is a 401, and none of them changes
// anything.
func TestDiscordApprovalButtons(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDiscord(t)
	att := dbtest.DiscordAttachment()
	th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: att})
	a := dbtest.PendingApproval(ctx, t, b.store, th.ID)
	const msg = "weft wants to call write_file on the MCP server files"
	click := func(id, token string, user discordtest.User, decision string) []byte {
		return discordtest.ButtonInteraction(appID, id, token, testGuild, att.DiscordThreadID, user, "400000000000000001", msg,
			"weft:approval:"+a.ID.String()+":"+decision)
	}

	forged := click("600000000000000001", "tok-forged", ada, "deny")
	before := b.rows(t)
	rec := b.post(forged, func(r *http.Request) { discordtest.NewInteractionSigner().SignRequest(r, forged, time.Now()) })
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	stale := click("600000000000000002", "tok-stale", ada, "deny")
	rec = b.post(stale, func(r *http.Request) { b.keys.SignRequest(r, stale, time.Now().Add(-time.Hour)) })
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, before, b.rows(t), "forged and stale clicks write nothing")

	approve := click("600000000000000003", "tok-approve", ada, "approve")
	rec = b.post(approve, b.signed(approve))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var resp struct {
		Type int `json:"type"`
		Data struct {
			Content    string            `json:"content"`
			Components []json.RawMessage `json:"components"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.Equal(t, 7, resp.Type, "UPDATE_MESSAGE")
	require.Contains(t, resp.Data.Content, msg)
	require.Contains(t, resp.Data.Content, "Approved** by ada")
	require.NotNil(t, resp.Data.Components)
	require.Empty(t, resp.Data.Components, "the buttons are gone")
	got, err := b.store.Approval(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalApproved, got.Status)
	require.Equal(t, ada.ID, got.DecidedBy)
	require.Equal(t, "discord", got.DecidedVia)

	after := b.rows(t)
	rec = b.post(approve, b.signed(approve))
	require.Equal(t, http.StatusUnauthorized, rec.Code, "a replayed click")
	grace := discordtest.User{ID: "200000000000000002", Name: "grace"}
	deny := click("600000000000000004", "tok-deny", grace, "deny")
	rec = b.post(deny, b.signed(deny))
	require.Equal(t, http.StatusOK, rec.Code)
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.Equal(t, 4, resp.Type)
	require.Equal(t, "This request was already approved by ada.", resp.Data.Content)
	after["webhook_deliveries"]++ // the second click's ledger entry, and nothing else
	require.Equal(t, after, b.rows(t))
	chain, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	require.Equal(t, thread.StitchApprovalDecision, chain[len(chain)-1].Type)
	require.Equal(t, thread.Approve, chain[len(chain)-1].Meta().Decision)
}
