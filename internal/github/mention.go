package github

import (
	"regexp"
	"strings"
)

var (
	// fencedCode, inlineCode, htmlComment and quoteLine are the parts of
	// a comment where an @mention is not a request: GitHub does not
	// notify for code, markers are weft's own, and a quote repeats
	// someone else's words.
	fencedCode  = regexp.MustCompile("(?s)(```|~~~).*?(```|~~~|$)")
	inlineCode  = regexp.MustCompile("`[^`\n]*`")
	htmlComment = regexp.MustCompile("(?s)<!--.*?-->")
	quoteLine   = regexp.MustCompile(`(?m)^[ \t]*>.*$`)
)

// Mentions reports whether body mentions @slug (or @slug[bot]) as GitHub
// reads a mention: not part of a longer name, an email address or a path,
// and outside code, quotes and HTML comments. Case does not matter.
func Mentions(body, slug string) bool {
	return mentionOf(slug).mentions(body)
}

// mention finds mentions of one slug.
type mention struct {
	lower string // "@slug", lower case
	re    *regexp.Regexp
}

func mentionOf(slug string) mention {
	return mention{lower: "@" + strings.ToLower(slug),
		re: regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_/.@-])@` + regexp.QuoteMeta(slug) + `(?:\[bot\])?(?:$|[^A-Za-z0-9_-])`)}
}

func (m mention) mentions(body string) bool {
	// Most comments mention no one: skip the rewriting for them.
	if m.lower == "@" || !strings.Contains(strings.ToLower(body), m.lower) {
		return false
	}
	for _, re := range []*regexp.Regexp{fencedCode, inlineCode, htmlComment, quoteLine} {
		body = re.ReplaceAllString(body, " ")
	}
	return m.re.MatchString(body)
}
