package threadview

import (
	"encoding/base64"
	"encoding/json"

	"github.com/weft-dev/weft/internal/httpapi"
)

// Cursor kinds: the endpoint that issues a cursor, and alone accepts it
// back. The REST API and the MCP server share each (one implementation
// answers both), so a cursor of one is good for the other.
const (
	CursorReplies  = "replies"
	CursorThreads  = "threads"
	CursorStitches = "stitches"
)

// cursor is what a cursor carries: where it was issued (the endpoint, and
// the scope it paged: a thread, an order, a listing's filters) and the
// position the page ended at.
type cursor struct {
	Kind  string          `json:"k"`
	Scope string          `json:"s,omitempty"`
	Pos   json.RawMessage `json:"p"`
}

// EncodeCursor makes a page position opaque, bound to the endpoint (kind)
// and the scope it was issued for: clients pass it back and never look
// inside, so its shape may change. Positions are plain values.
func EncodeCursor(kind, scope string, pos any) string {
	p, _ := json.Marshal(pos) // positions are plain values
	b, _ := json.Marshal(cursor{Kind: kind, Scope: scope, Pos: p})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads into pos a cursor EncodeCursor made for the same kind
// and scope. Anything else is an InvalidArgument: a cursor is refused
// rather than read as a position in another thread, order or listing.
func DecodeCursor(s, kind, scope string, pos any) error {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Kind == "" || json.Unmarshal(c.Pos, pos) != nil {
		return errBadCursor
	}
	if c.Kind != kind || c.Scope != scope {
		return httpapi.Invalid("cursor was issued for another endpoint, thread, order or filter")
	}
	return nil
}

// errBadCursor refuses a cursor this API did not make.
var errBadCursor = httpapi.Invalid("cursor is not one this API returned")
