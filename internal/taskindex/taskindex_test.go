package taskindex

import (
	"errors"
	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"os"
	"strings"
	"testing"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		job, slurm string // "-": unset
		want       int
		ok         bool
		err        string
	}{
		{"-", "-", 0, false, ""},
		{"3", "-", 3, true, ""},
		{"-", "12", 12, true, ""},
		{"2", "2", 2, true, ""},
		{"-", "007", 7, true, ""},
		{"1", "2", 0, false, "disagree"},
		{"-", "", 0, false, "empty"},
		{"0x1", "-", 0, false, "decimal"},
		{"-", "+1", 0, false, "decimal"},
		{"-", "-1", 0, false, "decimal"},
		{"-", "1 ", 0, false, "decimal"},
		{"-", "99999999999999999999", 0, false, "range"},
	} {
		for name, v := range map[string]string{"JOB_COMPLETION_INDEX": tc.job, "SLURM_ARRAY_TASK_ID": tc.slurm} {
			t.Setenv(name, v)
			if v == "-" {
				os.Unsetenv(name)
			}
		}
		i, _, ok, err := FromEnv()
		if tc.err != "" {
			if !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q/%q: error %v, want one naming %q", tc.job, tc.slurm, err, tc.err)
			}
			continue
		}
		if err != nil || i != tc.want || ok != tc.ok {
			t.Errorf("%q/%q: %d %v %v, want %d %v", tc.job, tc.slurm, i, ok, err, tc.want, tc.ok)
		}
	}
}

// TestUnsharded (issue 64, item 10): without a task index nothing is said;
// with $SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX set, a whole run per
// task (score) gets a warning naming the variable and {shards}, and any
// other command an error (ErrIndex) naming both.
func TestUnsharded(t *testing.T) {
	for _, v := range Vars {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	if w, err := Unsharded("experiment", false); w != nil || err != nil {
		t.Fatalf("no index: %v, %v", w, err)
	}
	for _, v := range Vars {
		t.Setenv(v, "3")
		w, err := Unsharded("audit", true)
		if err != nil || w == nil || !strings.Contains(flagtext.Render(w), "$"+v+"=3 is set and --shards is not") {
			t.Errorf("%s, score: %v, %v", v, w, err)
		}
		w, err = Unsharded("experiment", false)
		if w != nil || !errors.Is(err, ErrIndex) || !strings.Contains(flagtext.Render(err), "$"+v+"=3 is set but --shards is not") ||
			!strings.Contains(err.Error(), "whole experiment") {
			t.Errorf("%s, experiment: %v, %v", v, w, err)
		}
		os.Unsetenv(v)
	}
}

// TestShard: the shard comes from the given setting within [0, shards),
// and the refusals name the settings (Plain terms here).
func TestShard(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "")
	os.Unsetenv("JOB_COMPLETION_INDEX")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	os.Unsetenv("SLURM_ARRAY_TASK_ID")
	if i, err := Shard(4, 3, true, false); err != nil || i != 3 {
		t.Errorf("Shard(4, 3) = %d, %v; want 3", i, err)
	}
	for _, c := range []struct {
		shards, shard int
		given, gather bool
		want          string
	}{
		{-1, 0, false, false, "shards -1: must be 0"},
		{0, 2, true, false, "shard 2 needs shards"},
		{4, 4, true, false, "shard 4: must be in [0, 4) for shards 4"},
		{2, 0, false, true, "gather shards 2: gathering"},
		{2, 0, false, false, "shards 2 without shard: give shard I"},
	} {
		if _, err := Shard(c.shards, c.shard, c.given, c.gather); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Shard(%d, %d, %v, %v): %v; want %q", c.shards, c.shard, c.given, c.gather, err, c.want)
		}
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	if i, err := Shard(2, 0, false, false); err != nil || i != 1 {
		t.Errorf("Shard(2) with $SLURM_ARRAY_TASK_ID=1 = %d, %v; want 1", i, err)
	}
}
