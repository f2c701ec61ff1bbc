package replies

import (
	"encoding/base64"
	"encoding/json"
)

// EncodeCursor makes a page position opaque: clients pass it back and never
// look inside, so its shape may change. Positions are plain structs.
func EncodeCursor(pos any) string {
	b, _ := json.Marshal(pos) // positions are structs of plain fields
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor made by EncodeCursor into pos. A cursor that
// was not is an InvalidArgument.
func DecodeCursor(cursor string, pos any) error {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(b, pos) != nil {
		return invalid("cursor is not one this API returned")
	}
	return nil
}

// replyCursor is where a page of replies ended. It is bound to the thread
// and the order it was made for.
type replyCursor struct {
	Thread string `json:"t"`
	Order  Order  `json:"o"`
	// Pos is the last reply returned: a stitch's seq, or a Discord message id.
	Pos string `json:"p"`
}
