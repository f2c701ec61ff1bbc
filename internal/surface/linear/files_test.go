package linear

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestEventsCarryUploads: the images of Linear's uploads in a session's
// prompt context (the description, its comments) and in a user's
// prompt are kept in the stitches' metadata with the workspace that
// fetches them; text without them keeps no metadata. Which hosts are
// uploads is the client's (linear.Uploads): uploads.linear.app alone
// against Linear, the endpoint's host too against a fake.
func TestEventsCarryUploads(t *testing.T) {
	t.Parallel()
	const (
		img  = "https://uploads.linear.app/org1/a/b"
		fake = "http://127.0.0.1:9/uploads/org1/c"
	)
	signer := lineartest.Signer{Secret: []byte("s")}
	parse := func(d lineartest.Delivery) linearapi.Event {
		ev, err := linearapi.VerifyParse(signer.Secret, d.Body, d.Header.Get(linearapi.HeaderSignature), time.Now())
		require.NoError(t, err)
		return ev
	}
	created, o := signer.Created(lineartest.SessionOpts{SessionID: uuid.NewString(),
		PromptContext: "<issue>The chart is wrong: ![chart](" + img + ") ![](" + fake + ")</issue>"})
	prompted := signer.Prompted(o, uuid.NewString(), "and this one ![]("+img+")")
	plain := signer.Prompted(o, uuid.NewString(), "no picture")
	org := lineartest.OrganizationID
	chart := thread.File{Name: "chart", MediaType: "image/*", URL: img, Workspace: org}

	for _, tt := range []struct {
		name string
		up   linearapi.Uploads
		want []thread.File
	}{
		{name: "Linear", up: linearapi.NewUploads(linearapi.DefaultEndpoint), want: []thread.File{chart}},
		{name: "a fake", up: linearapi.NewUploads("http://127.0.0.1:9/graphql"),
			want: []thread.File{chart, {Name: "c", MediaType: "image/*", URL: fake, Workspace: org}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := linearEvent(thread.Inbound{DeliveryID: "d1"}, parse(created), tt.up)
			require.Equal(t, tt.want, ev.Prompt.Meta().Files)

			ev = linearEvent(thread.Inbound{DeliveryID: "d2"}, parse(prompted), tt.up)
			require.Equal(t, []thread.File{{Name: "b", MediaType: "image/*", URL: img, Workspace: org}}, ev.Messages[0].Meta().Files)

			ev = linearEvent(thread.Inbound{DeliveryID: "d3"}, parse(plain), tt.up)
			require.Empty(t, ev.Messages[0].Metadata)
		})
	}
}
