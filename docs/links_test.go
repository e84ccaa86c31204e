// Package docs holds amt's documentation pages. Its test checks every
// relative link and image of the repository's Markdown: the target file
// must exist, and a #anchor must name a heading of the target (GitHub's
// anchor rules). External links are not fetched (CI has no network), only
// checked for syntax.
package docs

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The repository's Markdown: every *.md below the root but the reports amt
// writes into results/<experiment>/ (results/README.md is checked), test
// fixtures other than their READMEs, and hidden or tool folders.
func TestLinks(t *testing.T) {
	files, err := markdownFiles("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "CONTRIBUTING.md", "docs/performance.md", "results/README.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is not among the files checked", want)
		}
	}
	c := newChecker("..")
	for _, f := range files {
		for _, p := range c.check(f) {
			t.Error(p)
		}
	}
	t.Logf("%d Markdown files checked", len(files))
}

// The checker finds what it should and nothing else.
func TestChecker(t *testing.T) {
	tree := map[string]string{
		"b.md":     "# Title\n\n## Setup: `amt check`\n\n## Dup\n\n## Dup\n\n<a id=\"custom\"></a>\n\nSecond\n------\n",
		"dir/c.md": "# C\n\n[up](../b.md#title) [root](/b.md) [self](#c)\n",
		"img.png":  "",
	}
	cases := []struct {
		name, doc string
		want      []string // problems, as "line: target" prefixes
	}{
		{"good", "[b](b.md) [dir](dir/) ![i](img.png) [t](b.md \"title\") [a](<b.md>)\n", nil},
		{"anchors", "[1](b.md#title) [2](b.md#setup-amt-check) [3](b.md#dup-1) [4](b.md#custom) [5](b.md#second) [6](#local-heading)\n\n## Local heading\n", nil},
		{"missing file", "text\n\n[gone](gone.md)\n", []string{"3: gone.md"}},
		{"missing image", "![x](figures/none.png)\n", []string{"1: figures/none.png"}},
		{"missing anchor", "[b](b.md#nope) [dup](b.md#dup-2) [here](#nowhere)\n", []string{"1: b.md#nope", "1: b.md#dup-2", "1: #nowhere"}},
		{"code is not a link", "```\n[x](gone.md)\n```\n\n`[y](gone.md)` and ``[z](gone.md)``\n\n    [w](gone.md)\n", nil},
		{"code span over two lines", "a `code\n[x](gone.md)` b [real](gone2.md)\n", []string{"2: gone2.md"}},
		{"reference definition", "[x][r]\n\n[r]: gone.md\n[s]: b.md#title\n", []string{"3: gone.md"}},
		{"external", "[ok](https://example.com/a#b) [bad](https://) [sp](http://a b)\n", []string{"1: https://"}},
		{"outside the repository", "[x](../../etc/passwd)\n", []string{"1: ../../etc/passwd"}},
		{"nested directory", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tree {
				writeFile(t, filepath.Join(root, name), body)
			}
			writeFile(t, filepath.Join(root, "a.md"), tc.doc)
			c := newChecker(root)
			got := c.check("a.md")
			if tc.name == "nested directory" {
				got = c.check("dir/c.md")
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems %q, want %d %q", len(got), got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], "a.md:"+w+":") {
					t.Errorf("problem %d is %q, want it to start with %q", i, got[i], "a.md:"+w+":")
				}
			}
		})
	}
}

// GitHub's heading anchors: lower case, punctuation dropped, spaces to
// hyphens, inline markup reduced to its text.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Model CI: `amt check`":                     "model-ci-amt-check",
		"Running on a cluster":                      "running-on-a-cluster",
		"2026-11-24 14:47 UTC — commit 05b8b9c":     "2026-11-24-1447-utc--commit-05b8b9c",
		"The agent benchmark: `make suite`":         "the-agent-benchmark-make-suite",
		"**Bold** and [a link](x.md) and `snake_c`": "bold-and-a-link-and-snake_c",
		"Ünïcode & <em>tags</em>":                   "ünïcode--tags",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// markdownFiles lists the Markdown files to check, relative to root, with
// forward slashes, sorted.
func markdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			if path.Dir(rel) == "results" { // reports written by amt plot
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".md") {
			return nil
		}
		if strings.Contains("/"+rel, "/testdata/") && path.Base(rel) != "README.md" {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out, err
}

// checker checks the links of Markdown files below root, caching each
// target file's anchors.
type checker struct {
	root    string
	anchors map[string]map[string]bool
}

func newChecker(root string) *checker {
	return &checker{root: root, anchors: map[string]map[string]bool{}}
}

// check returns the problems of file (relative to the root) as
// "file:line: target: reason", in the order of the file.
func (c *checker) check(file string) []string {
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(file)))
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", file, err)}
	}
	var out []string
	for _, l := range links(string(b)) {
		if reason := c.resolve(file, l.target); reason != "" {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s", file, l.line, l.target, reason))
		}
	}
	return out
}

// resolve returns why target, linked from file, does not resolve, or "".
func (c *checker) resolve(file, target string) string {
	if scheme, _, ok := strings.Cut(target, ":"); ok && isScheme(scheme) {
		switch strings.ToLower(scheme) {
		case "http", "https":
			u, err := url.Parse(target)
			if err != nil {
				return "not a URL: " + err.Error()
			}
			if u.Host == "" {
				return "a URL without a host"
			}
		case "mailto":
		default:
			return "unexpected scheme " + scheme
		}
		return ""
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	p, err := url.PathUnescape(p)
	if err != nil {
		return "bad escape: " + err.Error()
	}
	dest := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			dest = path.Clean(strings.TrimPrefix(p, "/"))
		} else {
			dest = path.Join(path.Dir(file), p)
		}
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(dest))); err != nil {
			return "no such file or folder"
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	a, ok := c.anchors[dest]
	if !ok {
		b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(dest)))
		if err != nil {
			return err.Error()
		}
		a = anchors(string(b))
		c.anchors[dest] = a
	}
	if !a[strings.ToLower(anchor)] {
		return fmt.Sprintf("no heading or anchor %q in %s", anchor, dest)
	}
	return ""
}

// isScheme reports whether s is a URL scheme (a letter, then letters,
// digits, +, - or .), as opposed to a path like "C" or "a/b".
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, r := range s {
		if !(r < unicode.MaxASCII && unicode.IsLetter(r) || i > 0 && (unicode.IsDigit(r) || strings.ContainsRune("+-.", r))) {
			return false
		}
	}
	return true
}

type link struct {
	line   int
	target string
}

var (
	fence      = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	inlineLink = regexp.MustCompile(`\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	refDef     = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)`)
	atx        = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	setext     = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	htmlID     = regexp.MustCompile(`<[^>]*\s(?:id|name)="([^"]+)"`)
	htmlTag    = regexp.MustCompile(`<[^>]*>`)
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// prose returns src with code blocks and code spans blanked out (their
// characters replaced by spaces, newlines kept), so that offsets and lines
// stay those of src.
func prose(src string) string {
	lines := strings.SplitAfter(src, "\n")
	var inFence string
	prevBlank, inIndented := true, false
	for i, l := range lines {
		text := strings.TrimRight(l, "\n")
		blank := strings.TrimSpace(text) == ""
		switch {
		case inFence != "":
			if m := fence.FindStringSubmatch(text); m != nil && strings.HasPrefix(m[1], inFence[:1]) && len(m[1]) >= len(inFence) && strings.TrimSpace(text[len(m[0]):]) == "" {
				inFence = ""
			}
			lines[i] = blankOut(l)
		case fence.MatchString(text):
			inFence = fence.FindStringSubmatch(text)[1]
			lines[i] = blankOut(l)
		case !blank && strings.HasPrefix(strings.ReplaceAll(text, "\t", "    "), "    ") && (prevBlank || inIndented):
			inIndented = true
			lines[i] = blankOut(l)
		case !blank:
			inIndented = false
		}
		prevBlank = blank
	}
	s := []byte(strings.Join(lines, ""))
	// Code spans: a run of n backticks up to the next run of exactly n,
	// within the paragraph.
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := 1
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		end := closingRun(s, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		for j := i; j < end+n; j++ {
			if s[j] != '\n' {
				s[j] = ' '
			}
		}
		i = end + n
	}
	return string(s)
}

// closingRun returns the start of the next run of exactly n backticks in s
// from i, before a blank line, or -1.
func closingRun(s []byte, i, n int) int {
	for j := i; j < len(s); {
		if s[j] == '\n' && strings.TrimSpace(string(s[j+1:min(len(s), indexByteFrom(s, j+1, '\n'))])) == "" {
			return -1
		}
		if s[j] != '`' {
			j++
			continue
		}
		k := j
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-j == n {
			return j
		}
		j = k
	}
	return -1
}

func indexByteFrom(s []byte, i int, c byte) int {
	for ; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

func blankOut(l string) string {
	if strings.HasSuffix(l, "\n") {
		return strings.Repeat(" ", len(l)-1) + "\n"
	}
	return strings.Repeat(" ", len(l))
}

// links returns the targets of src's inline links and images and of its
// reference definitions, outside code, with their lines.
func links(src string) []link {
	p := prose(src)
	var out []link
	add := func(off int, target string) {
		target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
		out = append(out, link{line: 1 + strings.Count(p[:off], "\n"), target: target})
	}
	for _, m := range inlineLink.FindAllStringSubmatchIndex(p, -1) {
		add(m[2], p[m[2]:m[3]])
	}
	for _, m := range refDef.FindAllStringSubmatchIndex(p, -1) {
		add(m[2], p[m[2]:m[3]])
	}
	slices.SortStableFunc(out, func(a, b link) int { return a.line - b.line })
	return out
}

// anchors returns the anchors of a Markdown file: its headings' slugs (a
// repeated slug gets -1, -2, …) and the ids and names of its HTML
// elements.
func anchors(src string) map[string]bool {
	p := prose(src)
	out := map[string]bool{}
	seen := map[string]int{}
	addHeading := func(text string) {
		s := slug(text)
		if n, ok := seen[s]; ok {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n+1)
		} else {
			seen[s] = 0
		}
		out[s] = true
	}
	lines := strings.Split(src, "\n")
	plines := strings.Split(p, "\n")
	for i, l := range plines {
		if strings.TrimSpace(l) == "" {
			continue // code, or blank
		}
		if m := atx.FindStringSubmatch(lines[i]); m != nil {
			addHeading(m[2])
			continue
		}
		if i > 0 && setext.MatchString(l) && strings.TrimSpace(plines[i-1]) != "" && !strings.Contains(lines[i-1], "|") && !atx.MatchString(lines[i-1]) {
			addHeading(strings.TrimSpace(lines[i-1]))
		}
	}
	for _, m := range htmlID.FindAllStringSubmatch(p, -1) {
		out[strings.ToLower(m[1])] = true
	}
	return out
}

// slug is GitHub's anchor of a heading: the heading's text (links reduced
// to their text, HTML tags removed), lower case, without the characters
// that are not letters, digits, marks, spaces, hyphens or underscores,
// spaces replaced by hyphens.
func slug(heading string) string {
	text := mdLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
