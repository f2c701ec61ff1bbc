package slack

import (
	"strings"
	"unicode/utf8"
)

// TextLimit is the longest part weft posts, in characters: Slack truncates
// text above 40,000 and advises staying under 4,000 (slack.md §4).
const TextLimit = 3900

const fence = "```"

// Split cuts text into parts of at most limit characters, at the last
// paragraph break, else line break, else space before the limit (a hard cut
// only for a word longer than limit). A code block cut in two is closed at
// the end of one part and opened again at the start of the next, so each
// part renders on its own.
func Split(text string, limit int) []string {
	text = strings.TrimSpace(text)
	if limit <= 2*len(fence)+2 {
		limit = TextLimit
	}
	var parts []string
	open := false // the text so far left a code block open
	for text != "" {
		prefix := ""
		if open {
			prefix = fence + "\n"
		}
		budget := limit - utf8.RuneCountInString(prefix)
		if utf8.RuneCountInString(text) <= budget {
			parts = append(parts, prefix+text)
			break
		}
		cut := cutAt(text, budget)
		part := strings.TrimRight(text[:cut], " \n")
		if leavesOpen(part, open) {
			// The part ends inside a code block: cut again with room
			// for the fence that closes it.
			cut = cutAt(text, budget-len(fence)-1)
			part = strings.TrimRight(text[:cut], " \n")
		}
		if open = leavesOpen(part, open); open {
			part += "\n" + fence
		}
		if p := strings.TrimSpace(prefix + part); p != "" && p != fence {
			parts = append(parts, prefix+part)
		}
		text = strings.TrimLeft(text[cut:], " \n")
	}
	return parts
}

// leavesOpen says whether a code block is open after part, given whether
// one was open before it.
func leavesOpen(part string, open bool) bool {
	return strings.Count(part, fence)%2 == 1 != open
}

// cutAt is the byte index to cut s at so that s[:i] holds at most n
// characters: after the last paragraph break, else line break, else space
// in the second half of that window, else at n.
func cutAt(s string, n int) int {
	end := len(s)
	if i := byteIndex(s, n); i < end {
		end = i
	}
	window := s[:end]
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(window, sep); i > end/2 {
			return i + len(sep)
		}
	}
	return end
}

// byteIndex is the byte offset of the n-th character of s (len(s) if
// shorter).
func byteIndex(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// Escape makes model text safe to post as mrkdwn: Slack's control
// characters &, < and > are escaped, so no <!channel>, <!here>,
// <!subteam^…> or <@U…> in it can ping anyone, and @channel, @here and
// @everyone written out get a zero-width joiner so they stay words even
// where Slack would link them.
func Escape(text string) string {
	text = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
	return pings.Replace(text)
}

var pings = strings.NewReplacer("@channel", "@\u2060channel", "@here", "@\u2060here", "@everyone", "@\u2060everyone")
