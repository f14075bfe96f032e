package scoring

import (
	"errors"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/eval/score"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// TestValidate: each setting outside its bounds is refused naming its
// field, and the message states the bound.
func TestValidate(t *testing.T) {
	ok := Job{K: 16, Bootstrap: score.BootstrapOptions{Resamples: 200}}
	ok.Oracle.BatchSize = 128
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid job refused: %v", err)
	}
	for _, c := range []struct {
		edit        func(*Job)
		field, text string
	}{
		{func(j *Job) { j.K = 1 }, "K", "1: must be in [2, 4096]"},
		{func(j *Job) { j.K = MaxK + 1 }, "K", "must be in [2, 4096]"},
		{func(j *Job) { j.Oracle.BatchSize = 0 }, "Oracle.BatchSize", "0: must be in [1, 1048576]"},
		{func(j *Job) { j.Bootstrap.Resamples = MaxResamples + 1 }, "Bootstrap.Resamples", "at most 100000"},
		{func(j *Job) { j.Shards = 33 }, "Shards", "33: more shards than the audit's tasks (33 > 32, 2 per K), " +
			"so 1 shards would run nothing; give Shards 32 or fewer"},
	} {
		j := ok
		c.edit(&j)
		err := j.Validate()
		var e *setting.Error
		if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v; want a field error for %s saying %q", c.field, err, c.field, c.text)
		}
	}
}
