package experiment

import "strings"

// mdText escapes text for MarkdownText.
var mdText = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", `\`, `\\`, "|", `\|`, "`", "\\`",
	"&", "&amp;", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

// MarkdownText is s as plain text in RESULTS.md, wherever it goes (a table
// cell, a heading, a sentence, an HTML comment): line breaks become
// spaces, so it stays on its line; '|' and '\' are escaped, so it stays in
// its cell; a backtick is escaped, so it opens no code span; '&', '<' and
// '>' become entities, so it opens no HTML tag (no <script>) and ends no
// comment; '[' and ']' are escaped, so it makes no link or image
// (![x](https://tracker/pixel.png) would load an image on every view).
// Every name from a config or a record (methods, forget sets,
// strategies, flags, the title) goes through it; names are not restricted
// at load beyond their length and a letter or digit (checkMethodName), so
// this is where a name becomes safe.
func MarkdownText(s string) string { return mdText.Replace(s) }

// MarkdownCode is s as a code span: fenced by one backtick more than the
// longest run of backticks in s (padded with spaces when s starts or ends
// with one), its line breaks as spaces.
func MarkdownCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	run, longest := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
