package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/servetest"
	"github.com/weft-dev/weft/internal/thread"
)

// discordWorld is `weft serve` running in-process with Discord and Linear
// on, against their fakes and a fake LLM: the real discordgo session on the
// fake gateway, interactions signed as Discord signs them.
type discordWorld struct {
	*linearWorld
	discord *discordtest.Server
	keys    *discordtest.InteractionSigner
	guild   string
	channel string
	ada     discordtest.User
}

func newDiscordWorld(t *testing.T) *discordWorld {
	t.Helper()
	return newDiscordWorldEnv(t, nil)
}

// newDiscordWorldEnv is newDiscordWorld with more environment for weft.
func newDiscordWorldEnv(t *testing.T, extra map[string]string) *discordWorld {
	t.Helper()
	const token, secret = "lin_api_e2e", "whsec-e2e"
	fake := discordtest.NewServer(t)
	w := &discordWorld{
		linearWorld: &linearWorld{llm: llmtest.NewServer(t), linear: lineartest.NewServer(t), signer: lineartest.Signer{Secret: []byte(secret)}},
		discord:     fake, keys: discordtest.NewInteractionSigner(),
		guild: "100000000000000001", ada: discordtest.User{ID: "200000000000000001", Name: "ada"},
	}
	w.channel = fake.AddChannel(w.guild)
	w.linear.AddToken(token, lineartest.OrganizationID)
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Answer to: " + r.Last().Content}
	})
	url := dbtest.URL(t)
	addr := servetest.Addr(t)
	vars := map[string]string{
		"DATABASE_URL": url, "WEFT_ADDR": addr, "WEFT_LOG_LEVEL": "warn",
		"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.llm.OpenAIBaseURL(),
		"LINEAR_WEBHOOK_SECRET": secret, "LINEAR_ACCESS_TOKEN": token, "LINEAR_API_URL": w.linear.URL(),
		"DISCORD_BOT_TOKEN": discordtest.Token, "DISCORD_API_URL": fake.URL(), "DISCORD_PUBLIC_KEY": w.keys.PublicKeyHex(),
		"DISCORD_APPLICATION_ID": fake.ApplicationID(), "DISCORD_ALLOWED_GUILDS": w.guild,
	}
	maps.Copy(vars, extra)
	w.base = servetest.Serve(t, addr, func(ctx context.Context) error { return runServe(ctx, env(vars), &bytes.Buffer{}) })
	_, err := fake.WaitIdentifies(servetest.Waiting(t), 1)
	require.NoError(t, err, "the gateway never connected")
	store, pool, err := Open(context.Background(), &Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	w.store = store
	return w
}

// mentionBot posts a message mentioning the bot in the channel.
func (w *discordWorld) mentionBot(text string) string {
	return w.discord.PostUserMessage(w.channel, w.ada, "<@"+w.discord.BotUser().ID+"> "+text).ID
}

// sent waits until the bot posted at least n messages in a channel, and
// every answer streamed on Discord was delivered (its messages hold their
// final text).
func (w *discordWorld) sent(t *testing.T, channelID string, n int) []discordtest.SentMessage {
	t.Helper()
	// Read again once delivered: a read taken before the delivery's last
	// edit shows a streamed message's text as it was then.
	require.Eventually(t, func() bool {
		return len(w.discord.Sent(channelID)) >= n && discordStreamsDelivered(t, w.store)
	}, 30*time.Second, 10*time.Millisecond, "the bot never posted %d messages", n)
	return w.discord.Sent(channelID)
}

// discordStreamsDelivered reports that no answer is streaming on Discord
// nor waiting to be delivered there.
func discordStreamsDelivered(t *testing.T, store *db.Store) bool {
	t.Helper()
	var open int
	require.NoError(t, store.Pool().QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM stream_messages WHERE platform = 'discord' AND finished_by IS NULL) +
		(SELECT count(*) FROM stream_messages m JOIN platform_deliveries d ON d.delivery_id = m.finished_by
		 WHERE m.platform = 'discord' AND d.status NOT IN ('sent', 'failed', 'dropped'))`).Scan(&open))
	return open == 0
}

// settled waits until the thread is idle (waitSettled).
func (w *discordWorld) settled(t *testing.T, id uuid.UUID) {
	t.Helper()
	waitSettled(t, w.store, id)
}

// waitSettled waits until a thread is idle: no turn running, every outbox
// row sent or failed. Every end-to-end world waits on it.
func waitSettled(t *testing.T, store *db.Store, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	require.Eventually(t, func() bool {
		th, err := store.Thread(ctx, id)
		require.NoError(t, err)
		if th.Status != thread.StatusWaiting || th.LeaseOwner != "" {
			return false
		}
		rows, err := store.ThreadOutbox(ctx, id)
		require.NoError(t, err)
		for _, o := range rows {
			if o.Status != thread.OutboxSent && o.Status != thread.OutboxFailed {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond)
}

func (w *discordWorld) chain(t *testing.T, id uuid.UUID) []thread.Stitch {
	t.Helper()
	chain, err := w.store.Stitches(context.Background(), id, db.StitchPage{})
	require.NoError(t, err)
	return chain
}

// inputs lists a chain's discord_message stitches by message id.
func inputs(chain []thread.Stitch) map[string]int {
	out := map[string]int{}
	for _, s := range chain {
		if s.Type == thread.StitchDiscordMessage {
			out[s.ExternalID]++
		}
	}
	return out
}

func countType(chain []thread.Stitch, typ thread.StitchType) int {
	n := 0
	for _, s := range chain {
		if s.Type == typ {
			n++
		}
	}
	return n
}

// interact posts a signed interaction and returns the answer.
func (w *discordWorld) interact(t *testing.T, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.base+"/webhooks/discord", bytes.NewReader(body))
	require.NoError(t, err)
	w.keys.SignRequest(req, body, time.Now())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func TestDiscordConversationEndToEnd(t *testing.T) {
	t.Parallel()
	w := newDiscordWorld(t)
	ctx := context.Background()
	require.NotEmpty(t, w.discord.CommandOverwrites(), "slash commands registered at start")
	w.llm.SetDefault(func(r llmtest.Request) llmtest.Reply {
		// Slower than the typing delay, so the indicator shows.
		return llmtest.Reply{Text: "Answer to: " + r.Last().Content, Delay: discord.TypingDelay + 200*time.Millisecond}
	})

	threadID := w.mentionBot("why is the nightly build red?")
	reply := w.sent(t, threadID, 1)
	// The mention opened a public thread on the message, named from the prompt.
	ch, ok := w.discord.Channel(threadID)
	require.True(t, ok)
	require.EqualValues(t, 11, ch.Type, "a public thread")
	require.Equal(t, "why is the nightly build red?", ch.Name)
	require.Equal(t, "Answer to: why is the nightly build red?", reply[0].Content)
	require.Empty(t, reply[0].AllowedMentions.Parse, "replies ping nobody")
	require.Positive(t, w.discord.Typing(threadID), "typing shown while the turn ran")
	th, err := w.store.ThreadByDiscordThread(ctx, threadID)
	require.NoError(t, err)
	w.settled(t, th.ID)

	// A follow-up in the thread continues the same weft thread.
	follow := w.discord.PostUserMessage(threadID, w.ada, "and the weekly one?")
	require.Equal(t, "Answer to: ada: and the weekly one?", w.sent(t, threadID, 2)[1].Content)
	w.settled(t, th.ID)
	last := w.llm.Requests()[len(w.llm.Requests())-1]
	require.Contains(t, last.Messages[0].Content, "why is the nightly build red?", "the whole conversation goes to the model")

	// An edit and a delete update the stitch and answer nothing.
	calls := w.llm.Calls()
	w.discord.EditMessage(threadID, follow.ID, "and the monthly one?")
	require.Eventually(t, func() bool {
		s, err := w.store.StitchByExternalID(ctx, thread.PlatformDiscord, follow.ID)
		require.NoError(t, err)
		return s.Content == "and the monthly one?" && !s.EditedAt.IsZero()
	}, 20*time.Second, 10*time.Millisecond)
	w.discord.DeleteMessage(threadID, follow.ID)
	require.Eventually(t, func() bool {
		s, err := w.store.StitchByExternalID(ctx, thread.PlatformDiscord, follow.ID)
		require.NoError(t, err)
		return !s.DeletedAt.IsZero()
	}, 20*time.Second, 10*time.Millisecond)

	// Bots never trigger a turn; messages in other channels are not weft's.
	w.discord.PostUserMessage(threadID, discordtest.User{ID: "300000000000000001", Name: "otherbot", Bot: true}, "beep")
	w.discord.PostUserMessage(w.channel, w.ada, "chatter without a mention")

	// Archiving deactivates the attachment; the weft thread stays as it was.
	w.discord.ArchiveThread(threadID)
	require.Eventually(t, func() bool {
		att, err := w.store.DiscordAttachment(ctx, th.ID)
		require.NoError(t, err)
		return !att.Active
	}, 20*time.Second, 10*time.Millisecond)
	got, err := w.store.Thread(ctx, th.ID)
	require.NoError(t, err)
	require.Equal(t, thread.StatusWaiting, got.Status)
	require.Equal(t, calls, w.llm.Calls(), "edits, deletes, bots and chatter answered nothing")
	require.Len(t, w.discord.Sent(threadID), 2)
	chain := w.chain(t, th.ID)
	require.Equal(t, map[string]int{follow.ID: 1}, inputs(chain))
	require.Equal(t, 1, countType(w.chain(t, th.ID), thread.StitchInitialPrompt))
}

func TestDiscordReconnectBackfillsOnce(t *testing.T) {
	t.Parallel()
	w := newDiscordWorld(t)
	ctx := context.Background()
	threadID := w.mentionBot("start")
	w.sent(t, threadID, 1)
	th, err := w.store.ThreadByDiscordThread(ctx, threadID)
	require.NoError(t, err)
	w.settled(t, th.ID)

	// The connection drops and cannot be resumed; what is posted meanwhile
	// never reaches the gateway.
	w.discord.DropConnection(true)
	missed := []string{
		w.discord.PostUserMessage(threadID, w.ada, "first while away").ID,
		w.discord.PostUserMessage(threadID, w.ada, "second while away").ID,
	}
	_, err = w.discord.WaitIdentifies(servetest.Waiting(t), 2)
	require.NoError(t, err, "never reconnected")

	replies := w.sent(t, threadID, 2)
	w.settled(t, th.ID)
	chain := w.chain(t, th.ID)
	require.Equal(t, map[string]int{missed[0]: 1, missed[1]: 1}, inputs(chain), "each missed message stored once")
	require.Equal(t, 2, countType(chain, thread.StitchLLMCall), "one turn for what was missed")
	require.Len(t, w.discord.Sent(threadID), 2, "one reply per turn")
	require.Contains(t, replies[1].Content, "second while away")

	// Another reconnect finds nothing new.
	w.discord.DropConnection(false)
	require.Eventually(t, func() bool { return w.discord.Resumes() >= 1 }, 30*time.Second, 10*time.Millisecond)
	w.settled(t, th.ID)
	require.Equal(t, map[string]int{missed[0]: 1, missed[1]: 1}, inputs(w.chain(t, th.ID)))
}

func TestContinueLinearSessionInDiscord(t *testing.T) {
	t.Parallel()
	w := newDiscordWorld(t)
	ctx := context.Background()

	// A Linear session, answered in Linear.
	opts := w.mention(t, "Please investigate the login redirect loop")
	w.activities(t, opts.SessionID, 2)
	th := w.thread(t, opts.SessionID)
	w.settled(t, th.ID)
	// /continue stays within an organisation: one holds both tenants.
	require.NoError(t, w.store.LinkTenants(ctx, "acme", thread.LinearTenant(opts.OrganizationID), thread.DiscordTenant(w.guild)))

	// /continue ENG-1 in the channel: deferred at once, then the link.
	status, resp := w.interact(t, discordtest.ContinueInteraction(w.discord.ApplicationID(), "tok-continue", w.guild, w.channel, w.ada, opts.IssueIdentifier))
	require.Equal(t, http.StatusOK, status)
	require.EqualValues(t, 5, resp["type"], "deferred")
	var edit string
	require.Eventually(t, func() bool {
		msgs := w.discord.InteractionMessages("tok-continue")
		if len(msgs) == 0 {
			return false
		}
		edit = msgs[0].Content
		return true
	}, 30*time.Second, 10*time.Millisecond)
	require.Contains(t, edit, "https://discord.com/channels/"+w.guild+"/")
	discordThread := edit[strings.LastIndex(edit, "/")+1:]

	// The Discord thread is public, attached to the same weft thread, and
	// opens with a summary; Linear gets the link.
	ch, ok := w.discord.Channel(discordThread)
	require.True(t, ok)
	require.EqualValues(t, 11, ch.Type)
	summary := w.sent(t, discordThread, 1)[0].Content
	require.Contains(t, summary, "login redirect")
	got, err := w.store.ThreadByDiscordThread(ctx, discordThread)
	require.NoError(t, err)
	require.Equal(t, th.ID, got.ID)
	acts := w.activities(t, opts.SessionID, 3)
	require.Equal(t, "response", acts[len(acts)-1].Type)
	require.Contains(t, acts[len(acts)-1].Body, edit[strings.Index(edit, "https://"):])
	require.Eventually(t, func() bool {
		for _, u := range w.linear.SessionUpdates() {
			for _, e := range u.ExternalURLs {
				if strings.Contains(e.URL, discordThread) {
					return true
				}
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "the session links the Discord thread")
	w.settled(t, th.ID)

	// A message in the Discord thread continues the thread with its whole
	// history, and the answer goes to Discord, not Linear.
	linearActs := len(w.linear.Activities(opts.SessionID))
	w.discord.PostUserMessage(discordThread, w.ada, "what did you find so far?")
	reply := w.sent(t, discordThread, 2)[1]
	require.Equal(t, "Answer to: ada: what did you find so far?", reply.Content)
	last := w.llm.Requests()[len(w.llm.Requests())-1]
	require.Contains(t, last.Messages[0].Content, "Please investigate the login redirect loop", "the Linear part of the history")
	w.settled(t, th.ID)
	require.Len(t, w.linear.Activities(opts.SessionID), linearActs, "nothing more in Linear")

	rows, err := w.store.View(ctx, "cross_platform_threads")
	require.NoError(t, err)
	require.Len(t, rows.Rows, 1)

	// /weft status in the Discord thread shows both platforms.
	status, resp = w.interact(t, discordtest.StatusInteraction(w.discord.ApplicationID(), "tok-status", w.guild, discordThread, w.ada))
	require.Equal(t, http.StatusOK, status)
	data, _ := resp["data"].(map[string]any)
	require.Contains(t, data["content"], "Discord")
	require.Contains(t, data["content"], "Linear ENG-1")
}
