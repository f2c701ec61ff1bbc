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
	if slug == "" || !strings.Contains(strings.ToLower(body), "@"+strings.ToLower(slug)) {
		return false
	}
	for _, re := range []*regexp.Regexp{fencedCode, inlineCode, htmlComment, quoteLine} {
		body = re.ReplaceAllString(body, " ")
	}
	re := regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_/.@-])@` + regexp.QuoteMeta(slug) + `(?:\[bot\])?(?:$|[^A-Za-z0-9_-])`)
	return re.MatchString(body)
}
