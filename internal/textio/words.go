package textio

import (
	"fmt"
	"strings"
)

// JoinAnd joins a list as English does: "a", "a and b", "a, b and c".
func JoinAnd(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
}

// Plural is word for one and word+"s" for any other count: "seed", "seeds".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Count is n with its word: "1 epoch", "2 epochs".
func Count(n int, word string) string { return fmt.Sprintf("%d %s", n, Plural(n, word)) }

// Wrap breaks s at spaces into lines of at most width bytes where it can
// (a longer word keeps a line of its own), each line after the first
// starting with indent: a long message keeps its first line short and its
// detail on the indented lines below.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(w) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// Closest returns the name among names nearest to word by edit distance
// (insertions, deletions, substitutions and swaps of adjacent runes), when
// it lies within a third of word's length (at least 1) and word is not
// itself one of them: the suggestion for a mistyped command.
func Closest(word string, names []string) (string, bool) {
	w := []rune(word)
	best, bestD := "", max(len(w)/3, 1)+1
	for _, n := range names {
		if n == word {
			return "", false
		}
		if d := editDistance(w, []rune(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best, best != ""
}

// editDistance is the optimal-string-alignment distance between a and b:
// Levenshtein's, with a swap of two adjacent runes counted as one edit.
func editDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
