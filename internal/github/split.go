package github

import (
	"strings"
	"unicode/utf16"
)

// BodyLimit is GitHub's limit on a comment's body: 65,536 characters,
// which GitHub counts in UTF-16 code units (an emoji is two).
const BodyLimit = 65536

// partLimit is the most text a part holds before its marker: room is left
// for the longest marker and the fences a split code block needs.
const partLimit = BodyLimit - 256

const fence = "```"

// Split cuts text into parts of at most limit UTF-16 code units, at the
// last paragraph break, else line break, else space in the second half of
// the window (a hard cut only within a word longer than that). A code
// block cut in two is closed at the end of one part and opened again at
// the start of the next, so each part renders on its own.
func Split(text string, limit int) []string {
	text = strings.TrimSpace(text)
	if limit <= 4*len(fence) {
		limit = partLimit
	}
	var parts []string
	open := false // a code block is open at the end of the text so far
	for text != "" {
		prefix := ""
		if open {
			prefix = fence + "\n"
		}
		budget := limit - len(prefix)
		if units(text) <= budget {
			parts = append(parts, prefix+text)
			break
		}
		// Room for a closing fence, whether or not it is needed.
		cut := cutAt(text, budget-len(fence)-1)
		part := strings.TrimRight(text[:cut], " \n")
		if open = strings.Count(part, fence)%2 == 1 != open; open {
			part += "\n" + fence
		}
		parts = append(parts, prefix+part)
		text = strings.TrimLeft(text[cut:], " \n")
	}
	return parts
}

// units is the length of s in UTF-16 code units, as GitHub counts.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutAt is the byte index to cut s at so that s[:i] holds at most n UTF-16
// code units, at a paragraph, line or word break when one is in the
// window's second half.
func cutAt(s string, n int) int {
	end := len(s)
	for i, r := range s {
		if n -= utf16.RuneLen(r); n < 0 {
			end = i
			break
		}
	}
	window := s[:end]
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(window, sep); i > end/2 {
			return i + len(sep)
		}
	}
	return end
}
