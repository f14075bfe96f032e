package data

import (
	"slices"
	"strings"
	"testing"
)

func TestParseValues(t *testing.T) {
	if v, err := ParseValues(" 0.5, 0.25 ,1", false); err != nil || !slices.Equal(v, []float32{0.5, 0.25, 1}) {
		t.Errorf("%v, %v", v, err)
	}
	if v, err := ParseValues("", true); err != nil || v != nil {
		t.Errorf("empty: %v, %v", v, err)
	}
	for _, c := range []struct {
		in       string
		positive bool
		want     string
	}{
		{"0.5,NaN", false, `"NaN" is not a finite number`},
		{"Inf", false, `"Inf" is not a finite number`},
		{"0.5,x", false, `"x" is not a finite number`},
		{"0.2,0", true, `"0" is not`},
		{"-1", true, "positive"},
	} {
		if _, err := ParseValues(c.in, c.positive); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}
