package textio

import (
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{JoinAnd(nil), ""}, {JoinAnd([]string{"a"}), "a"}, {JoinAnd([]string{"a", "b"}), "a and b"},
		{JoinAnd([]string{"a", "b", "c"}), "a, b and c"},
		{Plural(1, "seed"), "seed"}, {Plural(0, "seed"), "seeds"}, {Plural(2, "seed"), "seeds"},
		{Count(1, "epoch"), "1 epoch"}, {Count(3, "epoch"), "3 epochs"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestWrap: no line over the width where the words allow, the lines after
// the first indented, no word lost or split, and a word longer than the
// width on a line of its own.
func TestWrap(t *testing.T) {
	s := strings.Repeat("alpha beta gamma delta ", 12) + strings.Repeat("x", 50) + " end"
	got := Wrap(s, 40, "  ")
	lines := strings.Split(got, "\n")
	for i, l := range lines {
		if len(l) > 40 && !strings.Contains(l, strings.Repeat("x", 50)) {
			t.Errorf("line %d of %d bytes: %q", i, len(l), l)
		}
		if i > 0 && !strings.HasPrefix(l, "  ") {
			t.Errorf("line %d not indented: %q", i, l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(s), " ") || len(lines) < 6 {
		t.Errorf("words changed or not wrapped: %q", got)
	}
	if got := Wrap("short line", 40, "  "); got != "short line" {
		t.Errorf("a short line: %q", got)
	}
}

// TestClosest: a mistyped command finds the nearest name within a third of
// its length (at least one edit); a word too far, or one that is a name,
// gets none.
func TestClosest(t *testing.T) {
	names := []string{"eval", "score", "train", "inspect", "export", "localize", "compare", "experiment"}
	for _, c := range []struct {
		word, want string
		ok         bool
	}{
		{"evall", "eval", true}, {"scroe", "score", true}, {"inspct", "inspect", true},
		{"experimnet", "experiment", true}, {"expor", "export", true},
		{"eval", "", false}, {"zzz", "", false}, {"unlearn", "", false}, {"", "", false},
	} {
		got, ok := Closest(c.word, names)
		if got != c.want || ok != c.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", c.word, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"kitten", "sitting", 3}, {"ca", "abc", 3}, {"scroe", "score", 1}, {"", "abc", 3}} {
		if d := editDistance([]rune(c.a), []rune(c.b)); d != c.want {
			t.Errorf("edit distance %s/%s %d, want %d", c.a, c.b, d, c.want)
		}
	}
}
