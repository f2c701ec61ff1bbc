package linear_test

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
)

// FuzzLinearWebhook sends arbitrary bodies, signed or not, under arbitrary
// delivery ids. The handler must never panic (the API's recoverer would
// answer 500) and never answer a 5xx other than 503.
func FuzzLinearWebhook(f *testing.F) {
	// Logs are dropped: a fuzz target may not write to f's log.
	b := setupWith(f, dbtest.NewPool(f), slog.New(slog.DiscardHandler))
	created, o := b.signer.Created(lineartest.SessionOpts{})
	seeds := [][]byte{
		created.Body,
		b.signer.Prompted(o, uuid.NewString(), "also the footer").Body,
		b.signer.Stop(o, uuid.NewString()).Body,
		b.signer.Revoked(lineartest.OrganizationID, time.Now()).Body,
		[]byte(`{"type":"PermissionChange","action":"teamAccessChanged","organizationId":"o"}`),
		[]byte(`{"type":"AgentSessionEvent","action":"prompted","agentSession":{"id":"s\u0000"},"agentActivity":{"id":"a","content":{"body":"\u0000"}}}`),
		[]byte(`{"type":"AgentSessionEvent","action":"created","organizationId":"o","agentSession":{"id":"s","creatorId":"c"}}`),
		[]byte(`{}`), []byte(`[]`), []byte(`null`), []byte("\xff\xfe"), nil,
	}
	for i, s := range seeds {
		f.Add(s, uuid.NewString(), i%3 != 0)
	}
	f.Fuzz(func(t *testing.T, body []byte, deliveryID string, sign bool) {
		d := lineartest.Delivery{Body: body, Header: created.Header.Clone()}
		d.Header.Set(linear.HeaderDelivery, deliveryID)
		if sign {
			// A fresh signed timestamp, so the fuzzer's bodies get past
			// verification into parsing and ingest.
			d.Body = freshen(body)
			d.Header.Set(linear.HeaderSignature, b.signer.Sign(d.Body))
		}
		rec := b.deliver(d)
		if rec.Code >= 500 && rec.Code != 503 {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// freshen sets webhookTimestamp to now in a JSON object; other bodies are
// returned as they are.
func freshen(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return body
	}
	m["webhookTimestamp"] = json.RawMessage(strconv.FormatInt(time.Now().UnixMilli(), 10))
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}
