package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestShardIndex: where a sharded run takes its shard from (the commands'
// Before hook, checkFlagValues, sets --shard). --shard wins;
// otherwise, with --shards, $JOB_COMPLETION_INDEX (Kubernetes) or
// $SLURM_ARRAY_TASK_ID (Slurm), read strictly as decimal; both set and
// different is refused, and so is neither; without --shards neither is
// read.
func TestShardIndex(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		job, slurm string // "-" unset
		want       int
		err        []string // the error must name these
	}{
		{"none", []string{"--shards", "4"}, "-", "-", 0, []string{"--shards 4 without --shard", "Indexed Job", "job array"}},
		{"kubernetes", []string{"--shards", "4"}, "3", "-", 3, nil},
		{"slurm", []string{"--shards", "4"}, "-", "2", 2, nil},
		{"both agree", []string{"--shards", "4"}, "1", "1", 1, nil},
		{"leading zero", []string{"--shards", "16"}, "-", "07", 7, nil},
		{"flag wins", []string{"--shards", "4", "--shard", "3"}, "1", "2", 3, nil},
		{"no shards: not read", nil, "x", "", 0, nil},
		{"both differ", []string{"--shards", "4"}, "1", "2", 0, []string{"$JOB_COMPLETION_INDEX=1", "$SLURM_ARRAY_TASK_ID=2", "disagree"}},
		{"slurm empty", []string{"--shards", "4"}, "-", "", 0, []string{"$SLURM_ARRAY_TASK_ID", "empty"}},
		{"kubernetes empty", []string{"--shards", "4"}, "", "-", 0, []string{"$JOB_COMPLETION_INDEX", "empty"}},
		{"hex", []string{"--shards", "4"}, "-", "0x1", 0, []string{`$SLURM_ARRAY_TASK_ID="0x1"`, "decimal"}},
		{"sign", []string{"--shards", "4"}, "+1", "-", 0, []string{`$JOB_COMPLETION_INDEX="+1"`, "decimal"}},
		{"negative", []string{"--shards", "4"}, "-", "-1", 0, []string{`$SLURM_ARRAY_TASK_ID="-1"`, "decimal"}},
		{"space", []string{"--shards", "4"}, "-", " 1", 0, []string{"$SLURM_ARRAY_TASK_ID", "decimal"}},
		{"huge", []string{"--shards", "4"}, "-", "99999999999999999999", 0, []string{"$SLURM_ARRAY_TASK_ID", "range"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotErr := runShardApp(t, tc.job, tc.slurm, tc.args, &cli.IntFlag{Name: "shards"}, &cli.IntFlag{Name: "shard"})
			if tc.err == nil {
				if gotErr != nil || got != tc.want {
					t.Fatalf("shard %d, error %v; want %d", got, gotErr, tc.want)
				}
				return
			}
			var u usageError
			if !errors.As(gotErr, &u) {
				t.Fatalf("shard %d, error %v; want a usage error naming %q", got, gotErr, tc.err)
			}
			for _, s := range tc.err {
				if !strings.Contains(render(gotErr), s) {
					t.Errorf("error %q does not name %q", gotErr, s)
				}
			}
		})
	}
}

// TestShardFromSlurm: score and experiment take their shard from
// $SLURM_ARRAY_TASK_ID (an index past --shards is refused before any
// work, which shows where it came from), and refuse a malformed one, a
// sharded run with no shard, a negative --shards and more shards than
// work units, each with exit code 2.
func TestShardFromSlurm(t *testing.T) {
	data, forget := tinyFashion(t, 60, 20)
	run := func(env []string, args ...string) result {
		t.Helper()
		t.Setenv("JOB_COMPLETION_INDEX", "")
		os.Unsetenv("JOB_COMPLETION_INDEX")
		t.Setenv("SLURM_ARRAY_TASK_ID", "")
		os.Unsetenv("SLURM_ARRAY_TASK_ID")
		for _, e := range env {
			k, v, _ := strings.Cut(e, "=")
			t.Setenv(k, v)
		}
		return runCLI(t, args...)
	}
	score := []string{"score", "--model", model(t), "--data", data, "--forget", forget, "--k", "2", "--threads", "1",
		"--results", filepath.Join(t.TempDir(), "r"), "--shards", "4"}
	wantError(t, run([]string{"SLURM_ARRAY_TASK_ID=4"}, score...), exitUsage, "$SLURM_ARRAY_TASK_ID=4: no such shard of --shards 4", "--array=0-3")
	wantError(t, run(nil, append(score, "--shard", "7")...), exitUsage, "--shard 7: must be in [0, 4)")
	wantError(t, run(nil, score...), exitUsage, "--shards 4 without --shard", "completions: 4")
	// --shards given once (twice is refused: issue 64, item 10).
	wantError(t, run(nil, append(score[:len(score)-2:len(score)-2], "--shard", "5", "--shards", "1000000000")...), exitUsage, "--shards 1000000000: more shards than the audit's tasks (1000000000 > 4")
	wantError(t, run([]string{"SLURM_ARRAY_TASK_ID=0x1"}, score...), exitUsage, "$SLURM_ARRAY_TASK_ID", "0x1")
	wantError(t, run([]string{"SLURM_ARRAY_TASK_ID=1", "JOB_COMPLETION_INDEX=2"}, score...), exitUsage, "disagree")
	cfg := writeFile(t, "grid.yaml", []byte("architecture: "+model(t)+"\ndata: "+data+
		"\ntrain: {epochs: 1, lr: 0.05}\nforget_sets: [{name: iid, kind: iid, fraction: 0.1}]\nseeds: [0, 1]\nout: "+
		filepath.Join(t.TempDir(), "out")+"\nmethods:\n  - {name: SSD, method: ssd}\n"))
	// Both commands check the shard before any work, as usage errors
	// (issue 45, item 9); the grid's count of shards against its seeds.
	exp := []string{"experiment", "--config", cfg, "--dry-run"}
	wantError(t, run([]string{"SLURM_ARRAY_TASK_ID=2"}, append(exp, "--shards", "2")...), exitUsage, "$SLURM_ARRAY_TASK_ID=2: no such shard")
	wantError(t, run(nil, append(exp, "--shards", "-3")...), exitUsage, "--shards -3: must be 0")
	wantError(t, run(nil, append(exp, "--shards", "1000000000", "--shard", "5")...), exitUsage, "--shards 1000000000: more shards than seeds (1000000000 > 2 in "+cfg)
}

// TestScoreReadOnlyStorage (issue 45, item 10): on a real read-only mount
// (the test runs the commands under unshare -m, in a mount namespace of
// their own; skipped where mounting is not allowed), a results folder that
// is a writable volume on a read-only parent passes the output checks, a
// folder that does not exist there is refused naming the parent, and a
// --gather of a folder on read-only storage passes them with --json and
// --html elsewhere (the folder holds no audit here, which the library then
// says) and is refused, naming --json, when score.json would go into it.
func TestScoreReadOnlyStorage(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	data, forget := tinyFashion(t, 60, 20)
	root := t.TempDir()
	for _, p := range []string{"mnt/results", "mnt/done", "w", "out"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A results folder the library refuses after the checks: a settings
	// file of another schema.
	if err := os.WriteFile(filepath.Join(root, "w", "settings.json"), []byte(`{"schema": "other"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt, out := filepath.Join(root, "mnt"), filepath.Join(root, "out")
	score := fmt.Sprintf("%q score --model %q --data %q --forget %q --k 2 --threads 1", binPath, model(t), data, forget)
	runs := []struct {
		flags string
		want  []string
	}{
		{"--shards 4 --shard 0 --results " + mnt + "/results", []string{"exit 1", mnt + "/results/settings.json", `schema "other"`}},
		{"--shards 4 --shard 0 --results " + mnt + "/new", []string{"exit 1", "--results " + mnt + "/new: does not exist and cannot be created: folder " + mnt + " is not writable (read-only file system)"}},
		{"--gather --results " + mnt + "/done --json " + out + "/s.json --html " + out + "/s.html", []string{"exit 1", "no audit to gather", mnt + "/done/settings.json"}},
		{"--gather --results " + mnt + "/done", []string{"exit 1", "--json " + mnt + "/done/score.json: folder " + mnt + "/done is not writable (read-only file system)"}},
	}
	script := fmt.Sprintf(`set -e; mount --bind %[1]q %[1]q; mount -o remount,bind,ro %[1]q; mount --bind %[2]q %[1]q/results; set +e`, mnt, filepath.Join(root, "w"))
	for _, r := range runs {
		script += fmt.Sprintf("\necho '=== run'; %s %s 2>&1; echo \"exit $?\"", score, r.flags)
	}
	b, err := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script).CombinedOutput()
	got := strings.Split(string(b), "=== run\n")
	if err != nil || len(got) != len(runs)+1 {
		t.Skipf("cannot mount here: %v: %s", err, b)
	}
	for i, r := range runs {
		for _, w := range r.want {
			if !strings.Contains(got[i+1], w) {
				t.Errorf("%s: %q does not say %q", r.flags, got[i+1], w)
			}
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused runs wrote %v", ents)
	}
}

// TestCheckShard: the shard of a sharded run comes from --shard or the
// batch engine's task index, and is checked before the command runs: a
// negative --shards, a sharded run with no shard at all (a Job that is not
// Indexed), a malformed or empty index, a shard outside [0, --shards) and
// a gathering run given shards are usage errors that say what to set
// (more shards than work units: scoring.Job.Validate, TestShardFromSlurm).
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runShardApp(t, tc.job, tc.slurm, tc.args, &cli.IntFlag{Name: "k", Value: 2},
				&cli.IntFlag{Name: "shard"}, &cli.BoolFlag{Name: "gather"},
				&cli.IntFlag{Name: "shards"})
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
				if !strings.Contains(render(err), s) {
					t.Errorf("error %q does not say %q", render(err), s)
				}
			}
		})
	}
}

// runShardApp runs a "score" command with flags and the commands' Before
// hook (checkFlagValues) on args, whose action takes its shard from shardOf, with $JOB_COMPLETION_INDEX and
// $SLURM_ARRAY_TASK_ID set to job and slurm ("-": unset), and returns the
// shard the command saw (−1: it did not run) and the error.
func runShardApp(t *testing.T, job, slurm string, args []string, flags ...cli.Flag) (int, error) {
	t.Helper()
	for name, v := range map[string]string{"JOB_COMPLETION_INDEX": job, "SLURM_ARRAY_TASK_ID": slurm} {
		t.Setenv(name, v)
		if v == "-" {
			os.Unsetenv(name)
		}
	}
	got := -1
	app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{{Name: "score", Before: checkFlagValues, Flags: flags,
			Action: func(c *cli.Context) error {
				s, err := shardOf(c, c.Int("shards"), c.Int("shard"), c.Bool("gather"))
				if err == nil {
					got = s
				}
				return err
			}}}}
	err := app.Run(append([]string{"unlearn", "score"}, args...))
	return got, err
}
