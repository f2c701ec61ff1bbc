package linear

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

// TestEventsCarryUploads: the images of Linear's uploads in a session's
// prompt context (the description, its comments) and in a user's
// prompt are kept in the stitches' metadata with the workspace that
// fetches them; text without them keeps no metadata.
func TestEventsCarryUploads(t *testing.T) {
	t.Parallel()
	const img = "https://uploads.linear.app/org1/a/b"
	s := Session{Attachment: thread.LinearAttachment{SessionID: "s1", WorkspaceID: "org1", CreatedByUserID: "u1"},
		Prompt: "<issue>The chart is wrong: ![chart](" + img + ")</issue>"}
	want := []thread.File{{Name: "chart", MediaType: "image/*", URL: img, Workspace: "org1"}}

	ev := Created(thread.Inbound{DeliveryID: "d1"}, s)
	require.Equal(t, want, ev.Prompt.Meta().Files)

	ev = Prompted(thread.Inbound{DeliveryID: "d2"}, Session{Attachment: s.Attachment, Prompt: "plain"},
		Prompt{ActivityID: "a1", Text: "and this one ![](" + img + ")"})
	require.Empty(t, ev.Prompt.Metadata)
	require.Equal(t, []thread.File{{Name: "b", MediaType: "image/*", URL: img, Workspace: "org1"}}, ev.Messages[0].Meta().Files)
}
