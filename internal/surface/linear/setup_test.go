package linear_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/secret"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/surface/webhook"
)

var (
	webhookSecret = []byte("linear-webhook-signing-secret")
	stateSecret   = []byte("oauth-state-secret")
)

const redirectURI = "https://weft.example/oauth/linear/callback"

type bundle struct {
	pool   *pgxpool.Pool
	store  *db.Store
	server http.Handler
	signer lineartest.Signer
	linear *lineartest.Server
	tokens *surfacelinear.Installations
}

// setup serves the webhook handler the way weft serve does: mounted on the
// API's router.
func setup(t testing.TB) *bundle {
	t.Helper()
	return setupWith(t, dbtest.NewPool(t), dbtest.Logger(t))
}

func setupWith(t testing.TB, pool *pgxpool.Pool, logger *slog.Logger) *bundle {
	t.Helper()
	return setupIntake(t, pool, logger, nil)
}

// setupIntake is setupWith with the Linear webhook's intake given.
func setupIntake(t testing.TB, pool *pgxpool.Pool, logger *slog.Logger, intake *admission.Intake) *bundle {
	t.Helper()
	store := db.New(pool, logger)
	// Insert-only: jobs are written, never worked, so tests see what
	// ingest enqueued.
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	fake := lineartest.NewServer(t)
	cipher, err := secret.NewCipher(bytes.Repeat([]byte{1}, secret.KeySize))
	require.NoError(t, err)
	oauth := linear.NewOAuthClient(lineartest.ClientID, lineartest.ClientSecret, redirectURI, fake.TokenURL(), nil)
	tokens := surfacelinear.NewInstallations(store, cipher, oauth, logger)
	doors := surfacelinear.Doors{
		WebhookSecret: webhookSecret,
		OAuth: &surfacelinear.OAuth{
			ClientID: lineartest.ClientID, RedirectURI: redirectURI, StateSecret: stateSecret,
			Codes: oauth, Endpoint: fake.URL(), Installations: tokens,
		},
	}
	server := api.NewServer(api.Deps{Logger: logger, DB: store, Mount: func(r chi.Router) {
		doors.Routes(r, webhook.NewMount(webhook.MountDeps{Recorder: ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger}), Logger: logger, Intake: intake}))
	}})
	return &bundle{pool: pool, store: store, server: server, signer: lineartest.Signer{Secret: webhookSecret}, linear: fake, tokens: tokens}
}

func (b *bundle) deliver(d lineartest.Delivery) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	b.server.ServeHTTP(rec, d.Request("/webhooks/linear"))
	return rec
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// rows counts everything a delivery can write.
func (b *bundle) rows(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"webhook_deliveries", "threads", "stitches", "linear_thread_metadata", "platform_deliveries", "river_job"} {
		out[table] = b.count(t, "SELECT count(*) FROM "+table)
	}
	return out
}

// redelivered is d again under a new delivery id: same body, same
// signature, as when Linear sends one event twice.
func redelivered(d lineartest.Delivery, id string) lineartest.Delivery {
	h := d.Header.Clone()
	h.Set(linear.HeaderDelivery, id)
	return lineartest.Delivery{Body: d.Body, Header: h}
}

// signRaw signs body as it is, for bodies Signer.Deliver could not marshal.
func signRaw(s lineartest.Signer, body []byte) lineartest.Delivery {
	d := s.Deliver("AgentSessionEvent", map[string]any{})
	d.Body = body
	d.Header.Set(linear.HeaderSignature, s.Sign(body))
	return d
}
