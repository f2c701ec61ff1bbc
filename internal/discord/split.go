package discord

import (
	"strings"
	"unicode/utf8"
)

// MessageLimit is Discord's maximum message length, counted in Unicode code
// points (not bytes or UTF-16 units), per discord/discord-api-docs#1315.
const MessageLimit = 2000

// minSplitLimit keeps room for a reopened fence, its closing marker and some
// text in every part; smaller limits are raised to it.
const minSplitLimit = 16

// fenceMarker opens and closes a code block.
const fenceMarker = "```"

// Split cuts text into parts of at most limit code points so that each part
// renders correctly on its own when sent as a separate Discord message.
//
// A cut is made, in order of preference, after a blank line (paragraph),
// after a line break, or after a space or tab, as long as that keeps the part
// at least half full; otherwise it is made at the limit, always between runes.
// A code fence open at a cut is closed at the end of that part with a
// synthetic "```" line and reopened, with the same language tag, as the first
// line of the next part. A fence is a line whose left-trimmed text starts with
// "```" (CommonMark style, which is what model output uses); such a line
// toggles between code and text.
//
// Nothing of the input is dropped or reordered: removing the synthetic
// reopen line (with its newline) from the start of a part and the synthetic
// close (with the newline added before it, if any) from its end, then
// concatenating the parts, gives text back byte for byte. Whitespace at a cut
// stays at the end of the earlier part, where Discord does not render it.
// The fuzz test checks exactly this on the unexported chunk form, which keeps
// the synthetic markers apart from the original text.
//
// Empty text gives no parts; text that fits is returned as one part unchanged.
// Limits below 16 are raised to 16.
func Split(text string, limit int) []string {
	chunks := splitChunks(text, limit)
	parts := make([]string, 0, len(chunks))
	for _, c := range chunks {
		parts = append(parts, c.render())
	}
	return parts
}

// chunk is one part before rendering: a slice of the original text plus the
// synthetic fence markers around it.
type chunk struct {
	reopen string // fence line prepended (without its newline), "" if none
	body   string // the original text of this part
	close  bool   // whether a synthetic closing fence is appended
}

// render is the message content of the chunk.
func (c chunk) render() string {
	var b strings.Builder
	if c.reopen != "" {
		b.WriteString(c.reopen)
		b.WriteByte('\n')
	}
	b.WriteString(c.body)
	if c.close {
		if !strings.HasSuffix(c.body, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(fenceMarker)
	}
	return b.String()
}

// fenceState follows code fences through the original text across cuts.
type fenceState struct {
	open        bool
	info        string // language tag of the open fence
	atLineStart bool   // whether the next byte starts a line of the original
}

// splitChunks does the work of Split.
func splitChunks(text string, limit int) []chunk {
	limit = max(limit, minSplitLimit)
	var out []chunk
	st := fenceState{atLineStart: true}
	for rest := text; rest != ""; {
		reopen := ""
		if st.open {
			reopen = reopenLine(st.info, limit)
		}
		budget := limit
		if reopen != "" {
			budget -= utf8.RuneCountInString(reopen) + 1
		}
		// Counting only up to budget keeps long texts cheap: O(budget).
		if byteIndexAfterRunes(rest, budget) == len(rest) {
			out = append(out, chunk{reopen: reopen, body: rest})
			break
		}
		// Reserve room for a closing fence even when it turns out unneeded:
		// whether the cut falls inside a fence depends on where it is.
		cut := cutPoint(rest, budget-len("\n"+fenceMarker))
		if st.scan(rest[:cut]).open {
			cut = absorbClosingFence(rest, cut, budget)
			cut = dropDanglingOpener(st, rest, cut)
		}
		body := rest[:cut]
		st = st.scan(body)
		out = append(out, chunk{reopen: reopen, body: body, close: st.open})
		rest = rest[cut:]
	}
	return out
}

// absorbClosingFence extends a cut that lands right before a bare closing
// fence line to include that line when it fits, so the next part does not
// start with an empty reopened block. Only a bare "```" line qualifies, and
// only at a line start, and the caller asks only when a fence is open there.
func absorbClosingFence(rest string, cut, budget int) int {
	if cut > 0 && rest[cut-1] != '\n' {
		return cut
	}
	line, _, hasNewline := strings.Cut(rest[cut:], "\n")
	if line != fenceMarker {
		return cut
	}
	next := cut + len(line)
	if hasNewline {
		next++
	}
	if utf8.RuneCountInString(rest[:next]) > budget {
		return cut
	}
	return next
}

// dropDanglingOpener moves a cut that lands right after a line opening a
// fence to before that line, so a part does not end with an empty code block
// that the next part reopens. st is the state at the start of rest.
func dropDanglingOpener(st fenceState, rest string, cut int) int {
	body := rest[:cut]
	if !strings.HasSuffix(body, "\n") {
		return cut
	}
	lastStart := strings.LastIndexByte(body[:len(body)-1], '\n') + 1
	if lastStart == 0 {
		return cut
	}
	if before := st.scan(body[:lastStart]); before.open {
		return cut
	}
	return lastStart
}

// reopenLine is the fence line that reopens a code block with the given
// language tag. A tag too long to leave room for text is dropped: the part
// still renders as code, only without highlighting.
func reopenLine(info string, limit int) string {
	line := fenceMarker + info
	if utf8.RuneCountInString(line)+1 > limit/4 {
		return fenceMarker
	}
	return line
}

// cutPoint returns the byte index at which to cut s so that s[:i] holds at
// most maxRunes runes, preferring paragraph, then line, then word boundaries
// in the second half of that window.
func cutPoint(s string, maxRunes int) int {
	hard := byteIndexAfterRunes(s, maxRunes)
	window := s[:hard]
	half := hard / 2
	if i := strings.LastIndex(window, "\n\n"); i >= 0 && i+2 > half {
		return i + 2
	}
	if i := strings.LastIndexByte(window, '\n'); i >= 0 && i+1 > half {
		return i + 1
	}
	if i := strings.LastIndexAny(window, " \t"); i >= 0 && i+1 > half {
		return i + 1
	}
	return hard
}

// byteIndexAfterRunes returns the byte offset just after the first n runes of
// s (n ≥ 1), counting each invalid byte as one rune as RuneCountInString does.
func byteIndexAfterRunes(s string, n int) int {
	i := 0
	for range n {
		if i >= len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// scan advances the state over text, which continues the original right
// after the position the state describes.
func (st fenceState) scan(text string) fenceState {
	for text != "" {
		line, rest, hasNewline := strings.Cut(text, "\n")
		if st.atLineStart {
			if trimmed := strings.TrimLeft(line, " \t"); strings.HasPrefix(trimmed, fenceMarker) {
				st.open = !st.open
				st.info = ""
				if st.open {
					st.info = strings.TrimSpace(strings.TrimPrefix(trimmed, fenceMarker))
				}
			}
		}
		st.atLineStart = hasNewline
		text = rest
	}
	return st
}
