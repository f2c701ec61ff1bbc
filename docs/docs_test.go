// Package docs_test holds the documentation to the code: the package table
// of architecture.md to `go list`, and every link in the README and docs/
// to a file and heading that exist.
package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

const module = "github.com/weft-dev/weft/"

// rule is one row of the package table: what a package may import of weft.
type rule struct {
	allow, deny []string // patterns, module-relative
	text        string   // the column as written, for failure messages
}

// ticked is a backticked entry in a table cell.
var ticked = regexp.MustCompile("`([^`]+)`")

// packageTable reads the package table of architecture.md: the rows after
// the "| package | holds | may import" header, up to the first line that is
// not a row.
func packageTable(t *testing.T) map[string]rule {
	t.Helper()
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]rule{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| package | holds | may import"):
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "|---"):
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Errorf("architecture.md:%d: a package row has 3 cells (package | holds | may import), this one %d", n, len(cells))
			continue
		}
		name := ticked.FindAllStringSubmatch(cells[0], -1)
		if len(name) != 1 {
			t.Errorf("architecture.md:%d: the package cell %q names one package in backticks", n, cells[0])
			continue
		}
		pkg := name[0][1]
		if _, dup := rules[pkg]; dup {
			t.Errorf("architecture.md:%d: %s has a second row", n, pkg)
		}
		may := strings.TrimSpace(cells[2])
		allow, deny, _ := strings.Cut(may, " but ")
		r := rule{text: may}
		for _, m := range ticked.FindAllStringSubmatch(allow, -1) {
			r.allow = append(r.allow, m[1])
		}
		for _, m := range ticked.FindAllStringSubmatch(deny, -1) {
			r.deny = append(r.deny, m[1])
		}
		if len(r.allow) == 0 && may != "—" {
			t.Errorf("architecture.md:%d: %s's may-import cell %q allows nothing in backticks; write — for none", n, pkg, may)
		}
		rules[pkg] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("architecture.md has no package table (a header starting | package | holds | may import)")
	}
	return rules
}

// matches says whether the module-relative package pkg matches pattern: a
// path, a path.Match pattern, "..." (every package) or "x/..." (x and
// every package under it).
func matches(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	ok, err := path.Match(pattern, pkg)
	return err == nil && ok
}

func (r rule) allows(pkg string) bool {
	return slices.ContainsFunc(r.allow, func(p string) bool { return matches(p, pkg) }) &&
		!slices.ContainsFunc(r.deny, func(p string) bool { return matches(p, pkg) })
}

// TestPackageTable holds architecture.md's package table to `go list`:
// every package with non-test Go files has a row, every row is a package,
// and no package imports a weft package its row does not allow.
// Test files' imports are not ruled.
func TestPackageTable(t *testing.T) {
	t.Parallel()
	rules := packageTable(t)
	// A package of test files only (deploy, docs) prints "-" after its path.
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{if not .GoFiles}} -{{end}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue // the module's root package, if it ever has one, is not a folder of the table
		}
		listed[pkg] = true
		r, ok := rules[pkg]
		if len(fields) > 1 && fields[1] == "-" {
			continue // may have a row, needs none: it imports nothing outside its tests
		}
		if !ok {
			t.Errorf("package %s has no row in architecture.md's package table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if imp, ours := strings.CutPrefix(imp, module); ours && !r.allows(imp) {
				t.Errorf("%s imports %s, which architecture.md's package table does not allow (may import: %s)", pkg, imp, r.text)
			}
		}
	}
	for pkg := range rules {
		if !listed[pkg] {
			t.Errorf("architecture.md's package table has a row for %s, which go list does not know as a package", pkg)
		}
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"db", "db", true},
		{"db", "db/dbtest", false},
		{"...", "internal/app", true},
		{"internal/...", "internal", true},
		{"internal/...", "internal/llm/llmtest", true},
		{"internal/...", "internals", false},
		{"internal/*/*test", "internal/llm/llmtest", true},
		{"internal/*/*test", "internal/logtest", false},
	} {
		if got := matches(c.pattern, c.pkg); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.pattern, c.pkg, got, c.want)
		}
	}
	r := rule{allow: []string{"..."}, deny: []string{"internal/*/*test"}}
	if !r.allows("db") || r.allows("internal/linear/lineartest") {
		t.Error("an entry after but is excluded from what the entries before it allow")
	}
}

// link is a Markdown inline link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks resolves every relative link in the README and docs/: the file
// must exist, and a #fragment must name a heading of the file it points at.
func TestLinks(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append(docs, "../README.md") {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(withoutCode(string(text)), "\n") {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if err := resolve(doc, target); err != nil {
					t.Errorf("%s:%d: link %s: %v", doc, n+1, target, err)
				}
			}
		}
	}
}

// resolve checks one link target of doc.
func resolve(doc, target string) error {
	file, fragment, _ := strings.Cut(target, "#")
	if file == "" {
		file = doc
	} else {
		file = filepath.Join(filepath.Dir(doc), file)
	}
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("no file %s", file)
	}
	if fragment == "" {
		return nil
	}
	if !strings.HasSuffix(file, ".md") {
		return fmt.Errorf("a #%s into %s, which is not Markdown", fragment, file)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(withoutCode(string(text)), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok && anchor(strings.TrimLeft(h, "#")) == fragment {
			return nil
		}
	}
	return fmt.Errorf("%s has no heading whose anchor is #%s", file, fragment)
}

// withoutCode blanks the lines of fenced code blocks, whose brackets and #
// lines are not links or headings; the line count stays.
func withoutCode(text string) string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// but hyphens and underscores dropped, spaces as hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
