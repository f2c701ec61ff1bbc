package threadview

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/internal/thread"
)

// EncodeCursor makes a page position opaque: clients pass it back and never
// look inside, so its shape may change. Positions are plain structs.
func EncodeCursor(pos any) string {
	b, _ := json.Marshal(pos) // positions are structs of plain fields
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor made by EncodeCursor into pos. A cursor that
// was not is a thread.ErrInvalid.
func DecodeCursor(cursor string, pos any) error {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(b, pos) != nil {
		return errBadCursor
	}
	return nil
}

// errBadCursor refuses a cursor this API did not make.
var errBadCursor = &thread.Error{Kind: thread.ErrInvalid, Msg: "cursor is not one this API returned"}

// invalid is a thread.ErrInvalid whose message is safe to show a client.
func invalid(format string, args ...any) error {
	return &thread.Error{Kind: thread.ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}
