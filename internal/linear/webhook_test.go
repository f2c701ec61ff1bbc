package linear_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
)

var testSecret = []byte("whsec_test_secret")

func body(ts time.Time) []byte {
	return fmt.Appendf(nil, `{"type":"OAuthApp","action":"revoked","organizationId":"org","createdAt":"2026-01-08T16:33:12.000Z","webhookTimestamp":%d}`, ts.UnixMilli())
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 8, 16, 33, 12, 0, time.UTC)
	signer := lineartest.Signer{Secret: testSecret}
	fresh := body(now.Add(-2 * time.Second))

	tests := []struct {
		name    string
		secret  []byte
		body    []byte
		sig     string
		wantErr error
	}{
		{name: "Valid", secret: testSecret, body: fresh, sig: signer.Sign(fresh)},
		{name: "ValidUppercaseHex", secret: testSecret, body: fresh, sig: strings.ToUpper(signer.Sign(fresh))},
		{name: "ValidAtEdgeOfWindow", secret: testSecret, body: body(now.Add(-linear.WebhookTolerance)), sig: signer.Sign(body(now.Add(-linear.WebhookTolerance)))},
		{name: "Forged", secret: testSecret, body: fresh, sig: strings.Repeat("ab", 32), wantErr: linear.ErrBadSignature},
		{name: "WrongSecret", secret: testSecret, body: fresh, sig: lineartest.Signer{Secret: []byte("other")}.Sign(fresh), wantErr: linear.ErrBadSignature},
		{name: "EmptySecretConfigured", secret: nil, body: fresh, sig: lineartest.Signer{}.Sign(fresh), wantErr: linear.ErrBadSignature},
		{name: "MissingSignature", secret: testSecret, body: fresh, sig: "", wantErr: linear.ErrBadSignature},
		{name: "NotHex", secret: testSecret, body: fresh, sig: "sha256=" + signer.Sign(fresh), wantErr: linear.ErrBadSignature},
		{name: "TamperedBody", secret: testSecret, body: append([]byte(" "), fresh...), sig: signer.Sign(fresh), wantErr: linear.ErrBadSignature},
		{name: "TruncatedBody", secret: testSecret, body: fresh[:len(fresh)-5], sig: signer.Sign(fresh), wantErr: linear.ErrBadSignature},
		{name: "TruncatedBodySignedAsIs", secret: testSecret, body: fresh[:len(fresh)-5], sig: signer.Sign(fresh[:len(fresh)-5]), wantErr: linear.ErrMalformed},
		{name: "Stale", secret: testSecret, body: body(now.Add(-61 * time.Second)), sig: signer.Sign(body(now.Add(-61 * time.Second))), wantErr: linear.ErrStale},
		{name: "FutureSkewed", secret: testSecret, body: body(now.Add(90 * time.Second)), sig: signer.Sign(body(now.Add(90 * time.Second))), wantErr: linear.ErrStale},
		{name: "NonJSON", secret: testSecret, body: []byte("hello"), sig: signer.Sign([]byte("hello")), wantErr: linear.ErrMalformed},
		{name: "MissingTimestamp", secret: testSecret, body: []byte(`{"type":"OAuthApp"}`), sig: signer.Sign([]byte(`{"type":"OAuthApp"}`)), wantErr: linear.ErrMalformed},
		{name: "TimestampNotANumber", secret: testSecret, body: []byte(`{"webhookTimestamp":"soon"}`), sig: signer.Sign([]byte(`{"webhookTimestamp":"soon"}`)), wantErr: linear.ErrMalformed},
		{name: "AbsurdTimestamp", secret: testSecret, body: []byte(`{"webhookTimestamp":1e300}`), sig: signer.Sign([]byte(`{"webhookTimestamp":1e300}`)), wantErr: linear.ErrStale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := linear.Verify(tt.secret, tt.body, tt.sig, now)
			ev, perr := linear.VerifyParse(tt.secret, tt.body, tt.sig, now)
			if tt.wantErr == nil {
				require.NoError(t, err)
				require.NoError(t, perr)
				want, err := linear.Parse(tt.body)
				require.NoError(t, err)
				require.Equal(t, want, ev)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorIs(t, perr, tt.wantErr)
		})
	}
}

// The unsigned Linear-Timestamp header must not rescue a stale signed body
// (the replay bypass Linear fixed in its SDK).
func TestVerifyIgnoresTimestampHeader(t *testing.T) {
	t.Parallel()
	signer := lineartest.Signer{Secret: testSecret}
	d, _ := signer.Created(lineartest.SessionOpts{Timestamp: time.Now().Add(-time.Hour)})
	require.NotEmpty(t, d.Header.Get("Linear-Timestamp"))
	err := linear.Verify(testSecret, d.Body, d.Header.Get(linear.HeaderSignature), time.Now())
	require.ErrorIs(t, err, linear.ErrStale)
}

func TestParseCreated(t *testing.T) {
	t.Parallel()
	signer := lineartest.Signer{Secret: testSecret}
	d, opts := signer.Created(lineartest.SessionOpts{
		IssueIdentifier: "ENG-123", IssueTitle: "Checkout breaks", IssueDescription: "Steps…",
		CommentBody: "@weft please fix", CreatorName: "John Doe",
	})
	require.NoError(t, linear.Verify(testSecret, d.Body, d.Header.Get(linear.HeaderSignature), time.Now()))
	require.Equal(t, "AgentSessionEvent", d.Header.Get(linear.HeaderEvent))

	ev, err := linear.Parse(d.Body)
	require.NoError(t, err)
	se, ok := ev.(*linear.AgentSessionEvent)
	require.True(t, ok, "got %T", ev)
	require.Equal(t, linear.ActionCreated, se.Action)
	require.Equal(t, opts.SessionID, se.Session.ID)
	require.Equal(t, opts.SessionID, se.IdentityKey())
	require.Equal(t, lineartest.OrganizationID, se.Meta().OrganizationID)
	require.Equal(t, lineartest.AppUserID, se.AppUserID)
	require.False(t, se.CreatedAt.IsZero())
	require.False(t, se.Timestamp.IsZero())
	require.Equal(t, &linear.IssueRef{
		ID: opts.IssueID, Identifier: "ENG-123", Title: "Checkout breaks", Description: "Steps…",
		URL: "https://linear.app/test/issue/ENG-123", TeamID: opts.TeamID, TeamKey: "ENG", TeamName: "Engineering",
	}, se.Issue)
	require.Equal(t, "@weft please fix", se.Comment.Body)
	require.Equal(t, &linear.UserRef{ID: opts.CreatorID, Name: "John Doe", Email: "ada@example.com"}, se.Creator)
	require.Equal(t, []linear.GuidanceRule{{Body: "Always follow coding standards", Origin: "team", TeamName: "Engineering"}}, se.Guidance)
	require.Nil(t, se.Prompt)
	require.False(t, se.IsStop())

	// Without promptContext the prompt is rendered from the fields.
	prompt := se.InitialPrompt()
	require.Contains(t, prompt, `<issue identifier="ENG-123">`)
	require.Contains(t, prompt, "<title>Checkout breaks</title>")
	require.Contains(t, prompt, `<comment author="John Doe">@weft please fix</comment>`)
	require.Contains(t, prompt, `<guidance-rule origin="team" team-name="Engineering">Always follow coding standards</guidance-rule>`)
}

func TestParseCreatedWithPromptContextAndNoCreator(t *testing.T) {
	t.Parallel()
	d, _ := lineartest.Signer{Secret: testSecret}.Created(lineartest.SessionOpts{
		PromptContext: `<issue identifier="ENG-1"><title>x</title></issue>`, Automation: true,
	})
	ev, err := linear.Parse(d.Body)
	require.NoError(t, err)
	se := ev.(*linear.AgentSessionEvent)
	require.Nil(t, se.Creator)
	require.Equal(t, `<issue identifier="ENG-1"><title>x</title></issue>`, se.InitialPrompt())
}

func TestParsePromptedAndStop(t *testing.T) {
	t.Parallel()
	signer := lineartest.Signer{Secret: testSecret}
	_, opts := signer.Created(lineartest.SessionOpts{})

	ev, err := linear.Parse(signer.Prompted(opts, "act-1", "also fix the footer").Body)
	require.NoError(t, err)
	se := ev.(*linear.AgentSessionEvent)
	require.Equal(t, linear.ActionPrompted, se.Action)
	require.Equal(t, opts.SessionID, se.Session.ID)
	require.Equal(t, "act-1", se.IdentityKey())
	require.Equal(t, "also fix the footer", se.Prompt.Body)
	require.Equal(t, "also fix the footer", se.InitialPrompt())
	require.Equal(t, opts.CreatorID, se.Prompt.User.ID)
	require.False(t, se.IsStop())

	ev, err = linear.Parse(signer.Stop(opts, "act-2").Body)
	require.NoError(t, err)
	se = ev.(*linear.AgentSessionEvent)
	require.True(t, se.IsStop())
	require.Equal(t, linear.SignalStop, se.Prompt.Signal)
	require.Equal(t, "act-2", se.IdentityKey())
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		want    linear.Event
		wantErr error
	}{
		{
			name: "Revoked",
			body: `{"type":"OAuthApp","action":"revoked","createdAt":"2026-01-08T16:33:12.000Z","organizationId":"org","oauthClientId":"cli","webhookId":"wh","webhookTimestamp":1767889992000}`,
			want: &linear.OAuthAppRevoked{Envelope: linear.Envelope{
				Type: "OAuthApp", Action: "revoked", OrganizationID: "org", OAuthClientID: "cli", WebhookID: "wh",
				CreatedAt: time.Date(2026, 1, 8, 16, 33, 12, 0, time.UTC), Timestamp: time.UnixMilli(1767889992000),
			}},
		},
		{
			name: "PermissionChange",
			body: `{"type":"PermissionChange","action":"teamAccessChanged","organizationId":"org","appUserId":"app","canAccessAllPublicTeams":false,"addedTeamIds":["t1"],"removedTeamIds":["t2"]}`,
			want: &linear.PermissionChange{
				Envelope:     linear.Envelope{Type: "PermissionChange", Action: "teamAccessChanged", OrganizationID: "org", AppUserID: "app"},
				AddedTeamIDs: []string{"t1"}, RemovedTeamIDs: []string{"t2"},
			},
		},
		{
			name: "UnknownType",
			body: `{"type":"AppUserNotification","action":"issueMention","organizationId":"org"}`,
			want: &linear.UnknownEvent{
				Envelope: linear.Envelope{Type: "AppUserNotification", Action: "issueMention", OrganizationID: "org"},
				Body:     json.RawMessage(`{"type":"AppUserNotification","action":"issueMention","organizationId":"org"}`),
			},
		},
		{
			name: "UnknownSessionAction",
			body: `{"type":"AgentSessionEvent","action":"archived","agentSession":{"id":"s"}}`,
			want: &linear.UnknownEvent{
				Envelope: linear.Envelope{Type: "AgentSessionEvent", Action: "archived"},
				Body:     json.RawMessage(`{"type":"AgentSessionEvent","action":"archived","agentSession":{"id":"s"}}`),
			},
		},
		{
			name: "PromptBodyFallback",
			body: `{"type":"AgentSessionEvent","action":"prompted","agentSession":{"id":"s"},"agentActivity":{"id":"a","body":"legacy body","content":{}}}`,
			want: &linear.AgentSessionEvent{
				Envelope: linear.Envelope{Type: "AgentSessionEvent", Action: "prompted"},
				Session:  linear.Session{ID: "s"},
				Prompt:   &linear.Prompt{ActivityID: "a", Body: "legacy body"},
			},
		},
		{name: "NotJSON", body: `<xml/>`, wantErr: linear.ErrMalformed},
		{name: "NoType", body: `{"action":"created"}`, wantErr: linear.ErrMalformed},
		{name: "WrongFieldType", body: `{"type":"AgentSessionEvent","action":"created","agentSession":{"id":7}}`, wantErr: linear.ErrMalformed},
		{name: "CreatedWithoutSession", body: `{"type":"AgentSessionEvent","action":"created"}`, wantErr: linear.ErrMalformed},
		{name: "PromptedWithoutActivity", body: `{"type":"AgentSessionEvent","action":"prompted","agentSession":{"id":"s"}}`, wantErr: linear.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := linear.Parse([]byte(tt.body))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// Events without an id of their own are identified by their creation time,
// which, unlike the delivery timestamp, survives Linear's retries.
func TestIdentityKeyStableAcrossRedelivery(t *testing.T) {
	t.Parallel()
	signer := lineartest.Signer{Secret: testSecret}
	created := time.Now().Add(-time.Hour)
	first, err := linear.Parse(signer.Revoked("org", created).Body)
	require.NoError(t, err)
	again, err := linear.Parse(signer.Revoked("org", created).Body)
	require.NoError(t, err)
	require.Equal(t, first.IdentityKey(), again.IdentityKey())
	other, err := linear.Parse(signer.Revoked("org", created.Add(time.Second)).Body)
	require.NoError(t, err)
	require.NotEqual(t, first.IdentityKey(), other.IdentityKey())
}

func FuzzVerifyAndParse(f *testing.F) {
	signer := lineartest.Signer{Secret: testSecret}
	d, opts := signer.Created(lineartest.SessionOpts{})
	f.Add(d.Body, d.Header.Get(linear.HeaderSignature))
	f.Add(signer.Stop(opts, "a").Body, "")
	f.Add([]byte(`{"type":"AgentSessionEvent","action":"prompted","agentSession":{"id":""},"agentActivity":null}`), "00")
	f.Add([]byte(`{"webhookTimestamp":-1e309}`), "zz")
	f.Add([]byte(`[]`), "")
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		now := time.Now()
		_ = linear.Verify(testSecret, body, sig, now)
		// Signed with the right secret, a body can only fail for what it
		// says, never for its signature.
		err := linear.Verify(testSecret, body, signer.Sign(body), now)
		require.False(t, errors.Is(err, linear.ErrBadSignature), "correctly signed body rejected: %v", err)
		ev, perr := linear.Parse(body)
		// VerifyParse, one decode, is Verify then Parse.
		both, bothErr := linear.VerifyParse(testSecret, body, signer.Sign(body), now)
		if err == nil && perr == nil {
			require.NoError(t, bothErr)
			require.Equal(t, ev, both)
		} else {
			require.Error(t, bothErr)
		}
		if perr != nil {
			require.ErrorIs(t, perr, linear.ErrMalformed)
			return
		}
		_ = ev.IdentityKey()
		if se, ok := ev.(*linear.AgentSessionEvent); ok {
			_ = se.InitialPrompt()
			_ = se.IsStop()
		}
	})
}
