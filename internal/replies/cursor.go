package replies

// replyCursor is where a page of replies ended. It is bound to the thread
// and the order it was made for.
type replyCursor struct {
	Thread string `json:"t"`
	Order  Order  `json:"o"`
	// Pos is the last reply returned: a stitch's seq, or a Discord message id.
	Pos string `json:"p"`
}
