package slack

import "context"

// repliesPage is the page size of NewestReplies: Slack's recommended
// ceiling for conversations.replies, so a thread of up to 200 messages
// costs one call.
const repliesPage = 200

// NewestReplies reads a thread (conversations.replies) and returns its
// parent and its newest n-1 replies before latest ("" for up to now),
// oldest first. Slack pages a thread oldest first only, so a longer thread
// is walked to its end, at most maxPages pages; past that the newest
// replies of what was read are kept. The parent is kept whatever the
// thread's length: it says what the thread is about.
func (c *Client) NewestReplies(ctx context.Context, channel, threadTS, latest string, n, maxPages int) ([]Message, error) {
	if n <= 0 {
		return nil, nil
	}
	var parent *Message
	var replies []Message
	o := ReadOptions{Latest: latest, Limit: repliesPage}
	for range max(maxPages, 1) {
		pg, err := c.Replies(ctx, channel, threadTS, o)
		if err != nil {
			return nil, err
		}
		for _, m := range pg.Messages {
			if m.TS == threadTS {
				if parent == nil {
					parent = &m // Slack sends it first on every page
				}
				continue
			}
			replies = append(replies, m)
		}
		// Only the newest are kept: a long walk holds no more than a page
		// beyond them.
		if keep := n - 1; len(replies) > keep+repliesPage {
			replies = append(replies[:0], replies[len(replies)-keep:]...)
		}
		if pg.NextCursor == "" {
			break
		}
		o.Cursor = pg.NextCursor
	}
	out := make([]Message, 0, n)
	if parent != nil {
		out = append(out, *parent)
	}
	return append(out, replies[max(0, len(replies)-(n-len(out))):]...), nil
}
