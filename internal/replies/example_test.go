package replies_test

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/internal/replies"
)

// Page through a thread two replies at a time: each response carries the
// parent and, while there is more, the cursor for the next page.
func ExampleService_Get() {
	store := newMemStore("is the deploy green?", "checking", "staging is green", "prod too", "thanks!")
	svc, err := replies.New(replies.Config{Store: store})
	if err != nil {
		panic(err)
	}
	req := replies.Request{ThreadID: store.thread.ID.String(), Limit: 2}
	for {
		resp, err := svc.Get(context.Background(), req)
		if err != nil {
			panic(err)
		}
		fmt.Printf("parent %q:", *resp.Parent.Text)
		for _, m := range resp.Replies {
			fmt.Printf(" %q", *m.Text)
		}
		fmt.Println()
		if !resp.HasMore {
			break
		}
		req.Cursor = *resp.NextCursor
	}
	// Output:
	// parent "is the deploy green?": "checking" "staging is green"
	// parent "is the deploy green?": "prod too" "thanks!"
}
