package textio

import "testing"

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
