package demo

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// maxLine is how much of a message one printed line shows; the console and
// `weft thread show` have the rest.
const maxLine = 150

// printer writes the story as it happens: one line per thing a person
// would see, stamped with the time it was seen, on the platform it
// happened on.
type printer struct {
	out io.Writer
	now func() time.Time
}

// header starts a step of the story.
func (p *printer) header(n int, title string) {
	fmt.Fprintf(p.out, "\n%d. %s\n", n, title)
}

// line prints what who did on platform; kind, when not empty, names what
// it was (a Linear activity's type).
func (p *printer) line(platform, who, kind, what string) {
	if kind != "" {
		what = fmt.Sprintf("%-9s %s", kind, oneLine(what, maxLine-10))
	} else {
		what = oneLine(what, maxLine)
	}
	fmt.Fprintf(p.out, "   %s  %-8s %-5s %s\n", p.now().Format("15:04:05.000"), platform, who, what)
}

// note prints a remark of the demo's own, not something a platform showed.
func (p *printer) note(text string) {
	fmt.Fprintf(p.out, "   %12s  %s\n", "", text)
}

// oneLine folds text onto one line of at most n code points.
func oneLine(text string, n int) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
