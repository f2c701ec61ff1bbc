package linear_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/admission"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
)

func TestLinearWebhookRejects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	good, _ := b.signer.Created(lineartest.SessionOpts{})
	signed := func(body []byte) lineartest.Delivery { return signRaw(b.signer, body) }
	fresh := time.Now().UnixMilli()
	tests := []struct {
		name   string
		d      func() lineartest.Delivery
		status int
	}{
		{"Forged", func() lineartest.Delivery {
			d, _ := lineartest.Signer{Secret: []byte("someone else")}.Created(lineartest.SessionOpts{})
			return d
		}, http.StatusUnauthorized},
		{"TamperedBody", func() lineartest.Delivery {
			d := redelivered(good, uuid.NewString())
			d.Body = bytes.Replace(d.Body, []byte("Fix the login redirect"), []byte("Drop the database!!!!!"), 1)
			return d
		}, http.StatusUnauthorized},
		{"Stale", func() lineartest.Delivery {
			d, _ := b.signer.Created(lineartest.SessionOpts{Timestamp: time.Now().Add(-2 * time.Minute)})
			return d
		}, http.StatusUnauthorized},
		{"FromTheFuture", func() lineartest.Delivery {
			d, _ := b.signer.Created(lineartest.SessionOpts{Timestamp: time.Now().Add(2 * time.Minute)})
			return d
		}, http.StatusUnauthorized},
		{"StaleBodyFreshHeader", func() lineartest.Delivery {
			d, _ := b.signer.Created(lineartest.SessionOpts{Timestamp: time.Now().Add(-time.Hour)})
			d.Header.Set("Linear-Timestamp", time.Now().Format(time.RFC3339)) // unsigned: must not count
			return d
		}, http.StatusUnauthorized},
		{"Truncated", func() lineartest.Delivery {
			d := redelivered(good, uuid.NewString())
			d.Body = d.Body[:len(d.Body)/2]
			return d
		}, http.StatusUnauthorized},
		{"TruncatedAndResigned", func() lineartest.Delivery { return signed(good.Body[:len(good.Body)/2]) }, http.StatusBadRequest},
		{"Oversized", func() lineartest.Delivery {
			var p map[string]any
			require.NoError(t, json.Unmarshal(good.Body, &p))
			p["padding"] = strings.Repeat("x", 1<<20)
			return b.signer.Deliver("AgentSessionEvent", p)
		}, http.StatusRequestEntityTooLarge},
		{"NotJSON", func() lineartest.Delivery { return signed([]byte("not json at all")) }, http.StatusBadRequest},
		{"NoTimestamp", func() lineartest.Delivery {
			return signed([]byte(`{"type":"AgentSessionEvent","action":"created","agentSession":{"id":"s"}}`))
		}, http.StatusBadRequest},
		{"NoType", func() lineartest.Delivery {
			return signed([]byte(`{"webhookTimestamp":` + jsonInt(fresh) + `}`))
		}, http.StatusBadRequest},
		{"SessionEventWithoutSession", func() lineartest.Delivery {
			return signed([]byte(`{"type":"AgentSessionEvent","action":"created","webhookTimestamp":` + jsonInt(fresh) + `}`))
		}, http.StatusBadRequest},
		{"MissingSignature", func() lineartest.Delivery {
			d := redelivered(good, uuid.NewString())
			d.Header.Del(linear.HeaderSignature)
			return d
		}, http.StatusUnauthorized},
		{"SignatureNotHex", func() lineartest.Delivery {
			d := redelivered(good, uuid.NewString())
			d.Header.Set(linear.HeaderSignature, "sha256="+d.Header.Get(linear.HeaderSignature))
			return d
		}, http.StatusUnauthorized},
		{"MissingDeliveryID", func() lineartest.Delivery {
			d := redelivered(good, "")
			d.Header.Del(linear.HeaderDelivery)
			return d
		}, http.StatusBadRequest},
		{"DeliveryIDTooLong", func() lineartest.Delivery { return redelivered(good, strings.Repeat("d", 500)) }, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := b.deliver(tt.d())
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
		})
	}
	t.Run("WrongMethod", func(t *testing.T) {
		rec := httptest.NewRecorder()
		b.server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/webhooks/linear", nil))
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	})
	for table, n := range b.rows(t) {
		require.Zero(t, n, "%s: nothing is written for a rejected delivery", table)
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestLinearWebhookCreated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ThreadAckAndTurn", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		d, o := b.signer.Created(lineartest.SessionOpts{IssueIdentifier: "ENG-42", IssueTitle: "Checkout fails"})
		rec := b.deliver(d)
		require.Equal(t, http.StatusOK, rec.Code)

		th, err := b.store.ThreadByLinearSession(ctx, o.SessionID)
		require.NoError(t, err)
		require.Equal(t, "ENG-42: Checkout fails", th.Goal)
		require.Equal(t, thread.TypeInteractive, th.Type)
		att, err := b.store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.LinearAttachment{
			ThreadID: th.ID, SessionID: o.SessionID, WorkspaceID: lineartest.OrganizationID,
			IssueID: o.IssueID, IssueIdentifier: "ENG-42", IssueTitle: "Checkout fails", TeamID: o.TeamID,
			CommentID: o.CommentID, CreatedByUserID: o.CreatorID, SessionStatus: thread.SessionActive, Active: true,
			LastActivityAt: att.LastActivityAt, CreatedAt: att.CreatedAt, UpdatedAt: att.UpdatedAt,
		}, *att)

		prompt, err := b.store.StitchByExternalID(ctx, thread.PlatformLinear, o.SessionID)
		require.NoError(t, err)
		require.Equal(t, thread.StitchInitialPrompt, prompt.Type)
		require.Contains(t, prompt.Content, `<issue identifier="ENG-42">`)
		require.Contains(t, prompt.Content, "Always follow coding standards", "guidance is part of the prompt")
		require.Equal(t, &thread.Author{ID: o.CreatorID, Name: o.CreatorName}, prompt.Author)

		rows, err := b.store.ThreadOutbox(ctx, th.ID)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, thread.OutboxThought, rows[0].Kind)
		require.Equal(t, o.SessionID, rows[0].Target)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn'`))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'weft_delivery'`))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'weft_linear_start_issue'
			AND args->>'issue_id' = $1 AND args->>'organization_id' = $2`, o.IssueID, lineartest.OrganizationID),
			"a delegation moves the issue to started, off the request path")
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE delivery_id = $1 AND event_key = $2
			AND outcome = 'processed' AND thread_id = $3 AND payload->>'action' = 'created'`,
			d.Header.Get(linear.HeaderDelivery), o.SessionID, th.ID))
	})

	t.Run("MentionByAutomation", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		d, o := b.signer.Created(lineartest.SessionOpts{Automation: true, CommentBody: "@weft please look"})
		require.Equal(t, http.StatusOK, b.deliver(d).Code)
		th, err := b.store.ThreadByLinearSession(ctx, o.SessionID)
		require.NoError(t, err)
		att, err := b.store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, "automation", att.CreatedByUserID)
		require.Zero(t, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'weft_linear_start_issue'`))
	})

	t.Run("MentionIsNotDelegation", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		d, _ := b.signer.Created(lineartest.SessionOpts{CommentBody: "@weft why is this slow?"})
		require.Equal(t, http.StatusOK, b.deliver(d).Code)
		require.Zero(t, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'weft_linear_start_issue'`))
	})
}

func TestLinearWebhookRedelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, o := b.signer.Created(lineartest.SessionOpts{})

	// Sixteen copies at once: the same delivery, and the same event under
	// new delivery ids.
	var wg sync.WaitGroup
	codes := make([]int, 16)
	for i := range codes {
		dd := d
		if i%2 == 1 {
			dd = redelivered(d, uuid.NewString())
		}
		wg.Go(func() { codes[i] = b.deliver(dd).Code })
	}
	wg.Wait()
	for _, c := range codes {
		require.Equal(t, http.StatusOK, c)
	}
	want := map[string]int{"webhook_deliveries": 1, "threads": 1, "stitches": 2, "linear_thread_metadata": 1,
		"platform_deliveries": 1, "river_job": 3}
	require.Equal(t, want, b.rows(t))

	// Later: the same delivery again, and Linear's retry of the event
	// (a fresh signature and timestamp under a new delivery id).
	require.Equal(t, http.StatusOK, b.deliver(d).Code)
	retry, _ := b.signer.Created(o)
	require.Equal(t, http.StatusOK, b.deliver(retry).Code)
	require.Equal(t, want, b.rows(t))

	// The same for a prompt.
	p := b.signer.Prompted(o, uuid.NewString(), "also the footer")
	for range 3 {
		require.Equal(t, http.StatusOK, b.deliver(p).Code)
		require.Equal(t, http.StatusOK, b.deliver(redelivered(p, uuid.NewString())).Code)
	}
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM webhook_deliveries`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM stitches WHERE stitch_type = 'linear_activity'`))
}

func TestLinearWebhookPrompted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("BeforeCreated", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		created, o := b.signer.Created(lineartest.SessionOpts{IssueIdentifier: "ENG-9", IssueTitle: "Footer overlaps"})
		activity := uuid.NewString()
		require.Equal(t, http.StatusOK, b.deliver(b.signer.Prompted(o, activity, "also the footer")).Code)
		require.Equal(t, http.StatusOK, b.deliver(created).Code)

		th, err := b.store.ThreadByLinearSession(ctx, o.SessionID)
		require.NoError(t, err)
		require.Equal(t, "ENG-9: Footer overlaps", th.Goal)
		chain, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
		require.NoError(t, err)
		require.Len(t, chain, 3)
		require.Equal(t, thread.StitchInitialPrompt, chain[1].Type)
		require.Contains(t, chain[1].Content, `<issue identifier="ENG-9">`, "the session's prompt, not the user's message")
		require.Equal(t, thread.StitchLinearActivity, chain[2].Type)
		require.Equal(t, "also the footer", chain[2].Content)
		require.Equal(t, activity, chain[2].ExternalID)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM platform_deliveries WHERE kind = 'thought'`))
		require.Equal(t, 2, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE thread_id = $1`, th.ID))
	})

	t.Run("Stop", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		created, o := b.signer.Created(lineartest.SessionOpts{})
		require.Equal(t, http.StatusOK, b.deliver(created).Code)
		require.Equal(t, http.StatusOK, b.deliver(b.signer.Stop(o, uuid.NewString())).Code)
		th, err := b.store.ThreadByLinearSession(ctx, o.SessionID)
		require.NoError(t, err)
		require.Equal(t, thread.StatusAborted, th.Status)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM platform_deliveries WHERE kind = 'response' AND body->>'text' = $1`, surfacelinear.Stopped))
		att, err := b.store.LinearAttachment(ctx, th.ID)
		require.NoError(t, err)
		require.Equal(t, thread.SessionComplete, att.SessionStatus)
	})
}

func TestLinearWebhookOtherEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("RevokedDeactivates", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		require.NoError(t, b.store.SaveLinearInstallation(ctx, db.LinearInstallation{
			OrganizationID: lineartest.OrganizationID, AppUserID: lineartest.AppUserID, AccessTokenEnc: []byte("sealed"),
		}))
		d := b.signer.Revoked(lineartest.OrganizationID, time.Now())
		require.Equal(t, http.StatusOK, b.deliver(d).Code)
		require.Equal(t, http.StatusOK, b.deliver(redelivered(d, uuid.NewString())).Code)
		in, err := b.store.LinearInstallation(ctx, lineartest.OrganizationID)
		require.NoError(t, err)
		require.False(t, in.Active)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE event_type = 'OAuthApp' AND outcome = 'processed'`))
	})

	t.Run("IgnoredAreRecorded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		now := time.Now()
		for _, p := range []map[string]any{
			{"type": "PermissionChange", "action": "teamAccessChanged", "organizationId": lineartest.OrganizationID,
				"addedTeamIds": []string{"t1"}, "removedTeamIds": []string{}, "canAccessAllPublicTeams": false},
			{"type": "AppUserNotification", "action": "issueMention", "organizationId": lineartest.OrganizationID},
			{"type": "Issue", "action": "update", "organizationId": lineartest.OrganizationID},
		} {
			p["createdAt"], p["webhookTimestamp"] = now.UTC().Format(time.RFC3339Nano), now.UnixMilli()
			require.Equal(t, http.StatusOK, b.deliver(b.signer.Deliver(p["type"].(string), p)).Code)
		}
		require.Equal(t, 3, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE outcome = 'ignored'`))
		require.Zero(t, b.count(t, `SELECT count(*) FROM threads`))
	})

	t.Run("UnusableSessionIsIgnored", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Signed, but without the workspace a thread needs.
		d, _ := b.signer.Created(lineartest.SessionOpts{})
		var p map[string]any
		require.NoError(t, json.Unmarshal(d.Body, &p))
		p["organizationId"] = ""
		require.Equal(t, http.StatusOK, b.deliver(b.signer.Deliver("AgentSessionEvent", p)).Code)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_deliveries WHERE outcome = 'ignored'`))
		require.Zero(t, b.count(t, `SELECT count(*) FROM threads`))
	})
}

func TestLinearWebhookDatabaseDown(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: every connection is refused at once.
	pool, err := db.Open(context.Background(), "postgres://postgres@127.0.0.1:1/weft?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	b := setupWith(t, pool, dbtest.Logger(t))
	d, _ := b.signer.Created(lineartest.SessionOpts{})
	rec := b.deliver(d)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "Linear retries a 503")
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
}

// TestLinearWebhookOverCapacity fills the intake's slots: a signed
// delivery is refused at once, 503 with Retry-After (Linear retries it),
// and writes nothing; once a slot frees, the same delivery is taken.
func TestLinearWebhookOverCapacity(t *testing.T) {
	t.Parallel()
	intake := admission.NewIntake(1, time.Second)
	b := setupIntake(t, dbtest.NewPool(t), dbtest.Logger(t), intake)
	done, ok := intake.Admit()
	require.True(t, ok)
	d, _ := b.signer.Created(lineartest.SessionOpts{})
	before := b.rows(t)
	rec := b.deliver(d)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.Equal(t, before, b.rows(t), "a refused delivery writes nothing")
	done()
	require.Equal(t, http.StatusOK, b.deliver(d).Code)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM threads`))
	require.Zero(t, intake.InFlight(), "the slot is given back once answered")
}

// TestLinearWebhookSlowBodies holds more connections than the webhook has
// slots, each trickling a body it never finishes: a signed delivery is
// still answered, and each stalled sender is answered 400 once its body is
// late, not held on to.
func TestLinearWebhookSlowBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(b.server)
	t.Cleanup(srv.Close)

	const stalled = 100 // more than the webhook's slots (64)
	conns := make([]net.Conn, stalled)
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = fmt.Fprintf(c, "POST /webhooks/linear HTTP/1.1\r\nHost: weft\r\nContent-Length: 100000\r\n\r\n{")
		require.NoError(t, err)
		conns[i] = c
	}

	d, o := b.signer.Created(lineartest.SessionOpts{})
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/linear", bytes.NewReader(d.Body))
	require.NoError(t, err)
	req.Header = d.Header.Clone()
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = b.store.ThreadByLinearSession(context.Background(), o.SessionID)
	require.NoError(t, err)

	for i, c := range conns {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "stalled sender %d is answered", i)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
}

// TestLinearWebhookBodiesJSONBRefuses delivers signed bodies that Go reads
// but Postgres's jsonb would not store: each opens its session, and the
// ledger keeps it without its payload.
func TestLinearWebhookBodiesJSONBRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, r := range map[string]struct{ old, new string }{
		"LoneSurrogate": {"Fix the login redirect", `Fix the login redirect \ud83d`},
		"InvalidUTF8":   {"Fix the login redirect", "Fix the login redirect \xff"},
		"NUL":           {"Fix the login redirect", `Fix the login redirect \u0000`},
		"HugeNumber":    {"{", `{"extra":1e1000000,`}, // beyond numeric's range
	} {
		t.Run(name, func(t *testing.T) {
			d, o := b.signer.Created(lineartest.SessionOpts{})
			body := bytes.Replace(d.Body, []byte(r.old), []byte(r.new), 1)
			require.NotEqual(t, d.Body, body)
			rec := b.deliver(signRaw(b.signer, body))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			_, err := b.store.ThreadByLinearSession(context.Background(), o.SessionID)
			require.NoError(t, err)
		})
	}
	var kept int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE payload IS NOT NULL`).Scan(&kept))
	require.Zero(t, kept)
}
