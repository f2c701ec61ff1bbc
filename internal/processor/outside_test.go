package processor_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/thread"
)

// A post Linear keeps answering 500 costs at most its row's attempts in
// HTTP requests: the client's own retries are off for outbox sends, so the
// one budget is job.DeliveryMaxAttempts requests, whatever layer retries.
func TestLinearOutageCostsOneRequestPerAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lin := lineartest.NewServer(t)
	lin.Inject("", 1000, lineartest.ServerError(http.StatusInternalServerError))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	// The client's default retries, as weft serve builds it.
	client := linear.NewClient(lin.URL(), &http.Client{Transport: tr}, linear.StaticToken(lineartest.AccessToken))
	h := newHarnessSending(t, "openai", linear.NewSender(client, nil), nil)

	th := dbtest.Thread(ctx, t, h.store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
	o, err := h.store.InsertOutbox(ctx, thread.Outbox{ThreadID: th.ID, StitchID: th.HeadStitchID, Platform: thread.PlatformLinear,
		Target: "session-1", Kind: thread.OutboxThought, Body: thread.OutboxBody{Text: "Looking into it…"}.JSON()})
	require.NoError(t, err)
	insertOnly, err := river.NewClient(riverpgxv5.New(h.pool), &river.Config{})
	require.NoError(t, err)
	_, err = insertOnly.Insert(ctx, job.Delivery{OutboxID: o.ID, ThreadID: th.ID}, nil)
	require.NoError(t, err)

	rows := h.waitSent(t, th.ID, 1)
	require.Equal(t, thread.OutboxFailed, rows[0].Status)
	require.Equal(t, job.DeliveryMaxAttempts, rows[0].Attempts)
	require.Equal(t, job.DeliveryMaxAttempts, len(lin.Requests()), "one HTTP request per attempt of the row")
}
