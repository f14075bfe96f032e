package unlearn

import (
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize"
)

// TestLocalizeJobValidate: each bad setting is refused naming its field.
func TestLocalizeJobValidate(t *testing.T) {
	ok := LocalizeJob{Options: localize.Options{Strategy: "del", Budget: 0.1}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid job refused: %v", err)
	}
	for _, c := range []struct {
		edit  func(*LocalizeJob)
		field string
		text  string
	}{
		{func(j *LocalizeJob) { j.Options.Budget = 0 }, "Options.Budget", "must be in (0, 1]"},
		{func(j *LocalizeJob) { j.Options.Strategy = "nope" }, "Options.Strategy", "unknown"},
		{func(j *LocalizeJob) { j.Options.Strategy, j.ScoresPath = "random", "s" }, "ScoresPath", "computes no scores"},
		{func(j *LocalizeJob) { j.Options.TopK = -1 }, "Options.TopK", "must be ≥ 0"},
		{func(j *LocalizeJob) { j.Options.DepthFloor = 1 }, "Options.DepthFloor", "[0, 1)"},
	} {
		j := ok
		c.edit(&j)
		err := j.Validate()
		var e *setting.Error
		if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: got %v; want a field error for %s saying %q", c.field, err, c.field, c.text)
		}
	}
}
