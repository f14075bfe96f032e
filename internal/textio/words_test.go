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
