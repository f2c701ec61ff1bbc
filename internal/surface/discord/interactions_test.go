package discord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/ingest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/surface/webhook"
	"github.com/weft-dev/weft/internal/thread"
)

const (
	testGuild = "100000000000000001"
	appID     = "500000000000000001"
)

var ada = discordtest.User{ID: "200000000000000001", Name: "ada"}

// continueCall is one /continue the handler ran.
type continueCall struct{ ref, channelID, guildID, by string }

type fakeContinuer struct{ calls chan continueCall }

func (f *fakeContinuer) Elsewhere() string { return "Linear or Slack" }

func (f *fakeContinuer) ContinueRef(_ context.Context, ref, channelID, guildID, by string) (string, bool, error) {
	f.calls <- continueCall{ref, channelID, guildID, by}
	switch ref {
	case "ENG-404":
		return "", false, thread.ErrNotFound
	case "ENG-403":
		return "", false, fmt.Errorf("continue: %w", &thread.Error{Kind: thread.ErrInvalid, Msg: "the channel is in another organisation"})
	}
	return "https://discord.com/channels/" + testGuild + "/1", false, nil
}

// fakeDescriber is another platform /weft status lists: the threads set
// in it are attached there, any other is not.
type fakeDescriber struct{ lines sync.Map }

func (f *fakeDescriber) Describe(_ context.Context, id uuid.UUID) (string, error) {
	if line, ok := f.lines.Load(id); ok {
		return line.(string), nil
	}
	return "", thread.ErrNotFound
}

type edit struct{ app, token, content string }

type fakeResponder struct{ edits chan edit }

func (f *fakeResponder) EditInteractionResponse(_ context.Context, app, token, content string) error {
	f.edits <- edit{app, token, content}
	return nil
}

type discordBundle struct {
	pool      *pgxpool.Pool
	store     *db.Store
	server    http.Handler
	keys      *discordtest.InteractionSigner
	continuer *fakeContinuer
	responder *fakeResponder
	elsewhere *fakeDescriber
}

func setupDiscord(t *testing.T) *discordBundle {
	t.Helper()
	pool := dbtest.NewPool(t)
	logger := dbtest.Logger(t)
	store := db.New(pool, logger)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	d := &discordBundle{pool: pool, store: store, keys: discordtest.NewInteractionSigner(),
		continuer: &fakeContinuer{calls: make(chan continueCall, 10)}, responder: &fakeResponder{edits: make(chan edit, 10)}, elsewhere: &fakeDescriber{}}
	ing := ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger})
	in := &surfacediscord.Interactions{
		PublicKey: d.keys.PublicKey(), AllowedGuilds: []string{testGuild}, Threads: store, Elsewhere: []surfacediscord.Describer{d.elsewhere},
		Continue: d.continuer, Responses: d.responder, Aborter: ing,
		Approvals: &approval.Decider{Store: store, Jobs: rc, Logger: logger},
	}
	d.server = api.NewServer(api.Deps{Logger: logger, DB: store, Mount: func(r chi.Router) {
		in.Routes(r, webhook.NewMount(webhook.MountDeps{Recorder: ing, Logger: logger}))
	}})
	return d
}

// post sends body signed at `at` (or with headers from sign) and returns the answer.
func (b *discordBundle) post(body []byte, sign func(*http.Request)) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/discord", bytes.NewReader(body))
	sign(req)
	rec := httptest.NewRecorder()
	b.server.ServeHTTP(rec, req)
	return rec
}

func (b *discordBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// rows counts everything an interaction can write.
func (b *discordBundle) rows(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"webhook_deliveries", "threads", "stitches", "linear_thread_metadata", "platform_deliveries", "river_job"} {
		out[table] = b.count(t, "SELECT count(*) FROM "+table)
	}
	return out
}

func (b *discordBundle) signed(body []byte) func(*http.Request) {
	return func(r *http.Request) { b.keys.SignRequest(r, body, time.Now()) }
}

func TestDiscordInteractionRejections(t *testing.T) {
	t.Parallel()
	status := discordtest.StatusInteraction(appID, "tok", testGuild, "300000000000000001", ada)
	forger := discordtest.NewInteractionSigner()
	tests := []struct {
		name   string
		body   []byte
		sign   func(b *discordBundle) func(*http.Request)
		status int
	}{
		{"Unsigned", status, func(*discordBundle) func(*http.Request) { return func(*http.Request) {} }, http.StatusUnauthorized},
		{"ForgedKey", status, func(*discordBundle) func(*http.Request) {
			return func(r *http.Request) { forger.SignRequest(r, status, time.Now()) }
		}, http.StatusUnauthorized},
		{"Stale", status, func(b *discordBundle) func(*http.Request) {
			return func(r *http.Request) { b.keys.SignRequest(r, status, time.Now().Add(-time.Hour)) }
		}, http.StatusUnauthorized},
		{"FromTheFuture", status, func(b *discordBundle) func(*http.Request) {
			return func(r *http.Request) { b.keys.SignRequest(r, status, time.Now().Add(time.Hour)) }
		}, http.StatusUnauthorized},
		{"MalformedTimestamp", status, func(b *discordBundle) func(*http.Request) {
			return func(r *http.Request) {
				r.Header.Set("X-Signature-Ed25519", b.keys.SignTimestamp(status, "yesterday"))
				r.Header.Set("X-Signature-Timestamp", "yesterday")
			}
		}, http.StatusUnauthorized},
		{"BodyTamperedAfterSigning", append(bytes.Clone(status[:len(status)-1]), ' ', '}'), func(b *discordBundle) func(*http.Request) {
			return b.signed(status)
		}, http.StatusUnauthorized},
		{"Truncated", status[:len(status)/2], func(b *discordBundle) func(*http.Request) { return b.signed(status[:len(status)/2]) }, http.StatusBadRequest},
		{"Oversized", bytes.Repeat([]byte("x"), 2<<20), func(*discordBundle) func(*http.Request) { return func(*http.Request) {} }, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupDiscord(t)
			before := b.rows(t)
			rec := b.post(tt.body, tt.sign(b))
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
			require.Equal(t, before, b.rows(t), "nothing written")
		})
	}
}

func TestDiscordInteractions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("PingIsPonged", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.PingInteraction(appID)
		before := b.rows(t)
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.JSONEq(t, `{"type":1}`, rec.Body.String())
		require.Equal(t, before, b.rows(t), "a ping writes nothing")
	})

	t.Run("ReplayIsRejected", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.StatusInteraction(appID, "tok-replay", testGuild, "300000000000000001", ada)
		sign := b.signed(body)
		require.Equal(t, http.StatusOK, b.post(body, sign).Code)
		before := b.rows(t)
		rec := b.post(body, sign)
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		require.Equal(t, before, b.rows(t), "nothing written")
	})

	t.Run("StatusOfATrackedThread", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		att := dbtest.DiscordAttachment()
		th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: att, Goal: ptr("Fix the build")})
		body := discordtest.StatusInteraction(appID, "tok-s", testGuild, att.DiscordThreadID, ada)
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		var resp struct {
			Type int `json:"type"`
			Data struct {
				Content string `json:"content"`
				Flags   int    `json:"flags"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
		require.Equal(t, 4, resp.Type)
		require.Contains(t, resp.Data.Content, "Fix the build")
		require.Contains(t, resp.Data.Content, th.ID.String())
		require.Contains(t, resp.Data.Content, "pending")
		require.Contains(t, resp.Data.Content, "Platforms: Discord.")
		require.Equal(t, 64, resp.Data.Flags, "only the user sees it")
	})

	t.Run("StatusListsOtherPlatforms", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		att := dbtest.DiscordAttachment()
		th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: att})
		b.elsewhere.lines.Store(th.ID, "Linear ENG-7 (session active)")
		body := discordtest.StatusInteraction(appID, "tok-s", testGuild, att.DiscordThreadID, ada)
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Contains(t, rec.Body.String(), "Platforms: Discord, Linear ENG-7 (session active).")
	})

	t.Run("StatusOutsideAThread", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.StatusInteraction(appID, "tok-s", testGuild, "300000000000000001", ada)
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Contains(t, rec.Body.String(), "not a weft conversation")
	})

	t.Run("StopOfATrackedThread", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		att := dbtest.DiscordAttachment()
		th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: att})
		stop := func(token string) string {
			body := discordtest.CommandInteraction(appID, token, testGuild, att.DiscordThreadID, ada, "weft", []map[string]any{
				{"name": "stop", "type": 1},
			})
			rec := b.post(body, b.signed(body))
			require.Equal(t, http.StatusOK, rec.Code)
			return rec.Body.String()
		}
		require.Contains(t, stop("tok-stop-1"), "Stopped")
		got, err := b.store.Thread(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.StatusAborted, got.Status)
		require.Contains(t, stop("tok-stop-2"), "already finished", "a second stop changes nothing")
	})

	t.Run("StopOutsideAThread", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.CommandInteraction(appID, "tok-stop", testGuild, "300000000000000001", ada, "weft", []map[string]any{
			{"name": "stop", "type": 1},
		})
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Contains(t, rec.Body.String(), "not a weft conversation")
	})

	t.Run("ContinueIsDeferredThenEdited", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.ContinueInteraction(appID, "tok-c", testGuild, "300000000000000001", ada, "ENG-7")
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		require.JSONEq(t, `{"type":5}`, rec.Body.String())
		require.Equal(t, continueCall{"ENG-7", "300000000000000001", testGuild, ada.ID}, <-b.continuer.calls)
		got := <-b.responder.edits
		require.Equal(t, edit{appID, "tok-c", "Continuing the conversation here: https://discord.com/channels/" + testGuild + "/1"}, got)
	})

	t.Run("ContinueRefusedSaysWhy", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.ContinueInteraction(appID, "tok-c", testGuild, "300000000000000001", ada, "ENG-403")
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		<-b.continuer.calls
		got := <-b.responder.edits
		require.Equal(t, "I cannot continue that conversation here: the channel is in another organisation", got.content)
	})

	t.Run("ContinueOfAnUnknownIssue", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.ContinueInteraction(appID, "tok-c", testGuild, "300000000000000001", ada, "ENG-404")
		require.Equal(t, http.StatusOK, b.post(body, b.signed(body)).Code)
		<-b.continuer.calls
		require.Contains(t, (<-b.responder.edits).content, "no Linear or Slack conversation")
	})

	t.Run("OtherGuildsAreRefused", func(t *testing.T) {
		t.Parallel()
		b := setupDiscord(t)
		body := discordtest.ContinueInteraction(appID, "tok-c", "100000000000000002", "300000000000000001", ada, "ENG-7")
		rec := b.post(body, b.signed(body))
		require.Equal(t, http.StatusOK, rec.Code)
		require.True(t, strings.Contains(rec.Body.String(), "not enabled"))
		require.Empty(t, b.continuer.calls)
	})
}

func ptr[T any](v T) *T { return &v }
