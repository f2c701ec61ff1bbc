package mcpclient

import (
	"bytes"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

// TestRenderAttachesWhatProvidersTake attaches the images both providers
// accept, a few at most and none too large, and names the rest.
func TestRenderAttachesWhatProvidersTake(t *testing.T) {
	t.Parallel()
	img := func(mt string, n int) mcp.Content {
		return &mcp.ImageContent{MIMEType: mt, Data: bytes.Repeat([]byte{1}, n)}
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{
		img("image/svg+xml", 3),
		img("image/png", MaxImageBytes+1),
		img("image/png", 1), img("image/jpeg", 2), img("image/gif", 3), img("image/webp", 4),
		img("image/png", 5), // past maxImages
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
	}}
	var got []thread.Image
	out := Render(res, func(i thread.Image) { got = append(got, i) })
	require.Equal(t, "[image image/svg+xml, 3 bytes, not shown]\n"+
		"[image image/png, 5242881 bytes, not shown]\n"+
		"[image image/png, 1 bytes, attached]\n[image image/jpeg, 2 bytes, attached]\n"+
		"[image image/gif, 3 bytes, attached]\n[image image/webp, 4 bytes, attached]\n"+
		"[image image/png, 5 bytes, not shown]\n"+
		"[audio audio/wav, 4 bytes, not shown]", out)
	require.Len(t, got, maxImages)
	for i, mt := range []string{"image/png", "image/jpeg", "image/gif", "image/webp"} {
		require.Equal(t, mt, got[i].MediaType)
		require.Len(t, got[i].Data, i+1)
	}
}
