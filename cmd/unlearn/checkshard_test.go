package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestCheckShard: the shard of a sharded run comes from --shard or the
// batch engine's task index, and is checked before the command runs: a
// negative --shards, a sharded run with no shard at all (a Job that is not
// Indexed), a malformed or empty index, a shard outside [0, --shards) and
// more shards than work units are usage errors that say what to set, and
// so is a gathering run given shards.
func TestCheckShard(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		job, slurm string   // "-": unset
		want       int      // the shard the command runs
		err        []string // or the usage error's words
	}{
		{"flag", []string{"--shards", "4", "--shard", "3"}, "-", "-", 3, nil},
		{"kubernetes", []string{"--shards", "4"}, "3", "-", 3, nil},
		{"slurm", []string{"--shards", "4"}, "-", "0", 0, nil},
		{"flag wins", []string{"--shards", "4", "--shard", "1"}, "2", "-", 1, nil},
		{"no sharding: variables not read", nil, "x", "", 0, nil},
		{"last task of the audit", []string{"--k", "16", "--shards", "32", "--shard", "31"}, "-", "-", 31, nil},
		{"no shard anywhere", []string{"--shards", "2"}, "-", "-", 0,
			[]string{"--shards 2 without --shard: give --shard I (0 ≤ I < 2)", "Indexed Job with completions: 2", "--array=0-1", "$JOB_COMPLETION_INDEX"}},
		{"empty index", []string{"--shards", "2"}, "", "-", 0, []string{`$JOB_COMPLETION_INDEX=""`, "empty", "--shards 2 without --shard"}},
		{"hex index", []string{"--shards", "2"}, "0x1", "-", 0, []string{`$JOB_COMPLETION_INDEX="0x1"`, "decimal"}},
		{"negative shards", []string{"--shards", "-3"}, "-", "-", 0, []string{"--shards -3: must be 0 (no sharding) or the number of shards"}},
		{"flag past the shards", []string{"--shards", "2", "--shard", "7"}, "-", "-", 0, []string{"--shard 7: must be in [0, 2) for --shards 2"}},
		{"negative flag", []string{"--shards", "2", "--shard", "-1"}, "-", "-", 0, []string{"--shard -1: must be in [0, 2)"}},
		{"index past the shards", []string{"--shards", "2"}, "-", "2", 0,
			[]string{"$SLURM_ARRAY_TASK_ID=2: no such shard of --shards 2 (shards are 0 to 1)", "--array=0-1"}},
		{"gathering takes no shard", []string{"--gather", "--shards", "2"}, "1", "-", 0, []string{"--gather --shards 2: gathering reads every shard's results"}},
		{"shard without shards", []string{"--shard", "1"}, "-", "-", 0, []string{"--shard 1 needs --shards"}},
		{"more shards than tasks", []string{"--k", "16", "--shards", "1000000000", "--shard", "5"}, "-", "-", 0,
			[]string{"--shards 1000000000: more shards than the audit's tasks (1000000000 > 32, 2 per --k), so 999999968 shards would run nothing", "give --shards 32 or fewer", "completions: 32", "--array=0-31"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, v := range map[string]string{"JOB_COMPLETION_INDEX": tc.job, "SLURM_ARRAY_TASK_ID": tc.slurm} {
				t.Setenv(name, v)
				if v == "-" {
					os.Unsetenv(name)
				}
			}
			got := -1
			app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {},
				Commands: []*cli.Command{{Name: "score", Before: checkFlagValues,
					Flags: []cli.Flag{&cli.IntFlag{Name: "k", Value: 2}, &cli.IntFlag{Name: "shard"}, &cli.BoolFlag{Name: "gather"},
						&cli.IntFlag{Name: "shards", Action: shardsAtMost("k", 2, "the audit's tasks")}},
					Action: func(c *cli.Context) error {
						got = c.Int("shard")
						return nil
					}}}}
			err := app.Run(append([]string{"unlearn", "score"}, tc.args...))
			if tc.err == nil {
				if err != nil || got != tc.want {
					t.Fatalf("shard %d, error %v; want shard %d", got, err, tc.want)
				}
				return
			}
			if !isUsage(err) || got != -1 {
				t.Fatalf("ran shard %d, error %v; want a usage error before the command", got, err)
			}
			for _, s := range tc.err {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}
