package scoring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// testJob is a K = 2 audit of the bundled model and data with results in
// dir. Nothing here runs a model: the tests below stop before the tasks or
// gather task files they write themselves.
func testJob(t *testing.T, dir string) Job {
	t.Helper()
	ds, err := data.Open("../../testdata/fashion", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	forget := "../../testdata/demo/forget_nonIID.txt"
	ids, _, err := data.ReadForget(forget, ds.Train)
	if err != nil {
		t.Fatal(err)
	}
	s, err := eval.NewSuite(ds, forget, ids, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Job{ModelPath: "../../testdata/resnet_small_train.onnx", Suite: s, K: 2, Dir: dir,
		Method: unlearn.Job{Algorithm: "rft"}, RetainSample: 40, TestSample: 30,
		Oracle: unlearn.RetrainJob{Epochs: 1, LR: 0.05, BatchSize: 64, Momentum: 0.9}}
}

// TestCheckShards: the library refuses a negative number of shards, a
// shard outside [0, shards) and more shards than the audit's 2K tasks
// (shards that would run nothing) before anything is read or written.
func TestCheckShards(t *testing.T) {
	job := testJob(t, filepath.Join(t.TempDir(), "r"))
	for _, c := range []struct {
		shard, shards int
		want          string
	}{
		{0, -3, "-3 shards: want 0"},
		{7, 2, "shard 7 of 2: the shard must be in [0, 2)"},
		{5, 1000000000, "1000000000 shards of 4 tasks (2K): 999999996 shards would run nothing; at most 4"},
		{0, 5, "5 shards of 4 tasks"},
		{3, 4, ""},
		{0, 1, ""},
	} {
		j := job
		j.Shard, j.Shards = c.shard, c.shards
		err := j.check()
		if c.want == "" {
			if err != nil {
				t.Errorf("shard %d of %d: %v", c.shard, c.shards, err)
			}
			continue
		}
		if !errors.Is(err, unlearn.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("shard %d of %d: %v, want ErrInput saying %q", c.shard, c.shards, err, c.want)
		}
	}
}

// writeOracles makes dir a shared oracles folder for job: the oracles.json
// a run of job writes there (no oracle task yet).
func writeOracles(t *testing.T, job Job, dir string) {
	t.Helper()
	r := &state{job: job}
	r.retain = sample(job.Suite.Retain, job.RetainSample, job.SampleSeed, 1)
	r.test = sample(data.Range(job.Suite.Data.Test.Len()), job.TestSample, job.SampleSeed, 2)
	st, err := r.settings()
	if err != nil {
		t.Fatal(err)
	}
	st.Setup = OracleSetup(st.Setup)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, "oracles.json"), st); err != nil {
		t.Fatal(err)
	}
}

// tree lists the files under dir with their modes, sizes and times ("" for
// a folder that does not exist).
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %s\n", p, info.Mode(), info.Size(), info.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRefusedRunLeavesNothing (issue 45, item 7): a run refused for a
// shared oracles folder of another recipe, or a --gather on a folder that
// holds no audit (a mistyped path), creates neither its results folder
// nor settings.json, and leaves the oracles folder as it was: the
// corrected run is then accepted.
func TestRefusedRunLeavesNothing(t *testing.T) {
	root := t.TempDir()
	oracles := filepath.Join(root, "oracles")
	writeOracles(t, testJob(t, ""), oracles)
	before := tree(t, oracles)

	job := testJob(t, filepath.Join(root, "third"))
	job.OracleDir = oracles
	job.Oracle.Epochs = 2
	_, err := Run(context.Background(), job)
	if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "recipe.epochs: 1 ≠ 2") {
		t.Fatalf("another recipe against the shared oracles: %v, want ErrSettings naming recipe.epochs", err)
	}
	if _, err := os.Lstat(job.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run left %s (%v)", job.Dir, err)
	}
	if after := tree(t, oracles); after != before {
		t.Errorf("the refused run changed the oracles folder:\n%s\nwas:\n%s", after, before)
	}

	for _, c := range []struct{ name, dir, oracles, missing string }{
		{"mistyped results folder", filepath.Join(root, "thrid"), "", "thrid/settings.json"},
		{"mistyped oracles folder", filepath.Join(root, "fourth"), filepath.Join(root, "oracels"), "oracels/oracles.json"},
	} {
		j := testJob(t, c.dir)
		j.Gather, j.OracleDir = true, c.oracles
		if c.oracles != "" { // the results folder holds its settings; the oracles folder is the typo
			r := &state{job: j}
			r.retain = sample(j.Suite.Retain, j.RetainSample, j.SampleSeed, 1)
			r.test = sample(data.Range(j.Suite.Data.Test.Len()), j.TestSample, j.SampleSeed, 2)
			st, err := r.settings()
			if err == nil {
				err = os.MkdirAll(c.dir, 0o755)
			}
			if err == nil {
				err = writeJSON(filepath.Join(c.dir, "settings.json"), st)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		was := tree(t, c.dir)
		_, err := Run(context.Background(), j)
		if !errors.Is(err, ErrNoAudit) || !strings.Contains(err.Error(), c.missing) {
			t.Errorf("%s: %v, want ErrNoAudit naming %s", c.name, err, c.missing)
		}
		if now := tree(t, c.dir); now != was {
			t.Errorf("%s: the refused gather changed %s:\n%s\nwas:\n%s", c.name, c.dir, now, was)
		}
		if c.oracles != "" {
			if _, err := os.Lstat(c.oracles); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the refused gather created %s", c.name, c.oracles)
			}
		}
	}

	// The corrected run (the shared folder's recipe) passes the settings'
	// checks: with a cancelled context it stops at its first task, having
	// written its own settings.json.
	job.Oracle.Epochs = 1
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job.Shards, job.Shard = 4, 2 // unlearned 0: no oracle task in the shared folder
	if _, err := Run(ctx, job); errors.Is(err, ErrSettings) {
		t.Fatalf("the corrected run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(job.Dir, "settings.json")); err != nil {
		t.Errorf("the corrected run wrote no settings.json: %v", err)
	}
}

// finishedAudit writes a finished audit of job into job.Dir as its tasks
// would have: settings.json, oracles.json and the 2K task files, with
// made-up outputs of the right lengths.
func finishedAudit(t *testing.T, job Job) {
	t.Helper()
	r := &state{job: job, dirs: map[string]string{schema.ScoreOracle: job.Dir, schema.ScoreUnlearned: job.Dir}, digest: map[string]string{}}
	r.retain = sample(job.Suite.Retain, job.RetainSample, job.SampleSeed, 1)
	r.test = sample(data.Range(job.Suite.Data.Test.Len()), job.TestSample, job.SampleSeed, 2)
	st, err := r.settings()
	if err != nil {
		t.Fatal(err)
	}
	ost := st
	ost.Setup = OracleSetup(st.Setup)
	if err := os.MkdirAll(filepath.Join(job.Dir, "tasks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r.digest[schema.ScoreUnlearned], err = syncSettings(filepath.Join(job.Dir, "settings.json"), st); err != nil {
		t.Fatal(err)
	}
	if r.digest[schema.ScoreOracle], err = syncSettings(filepath.Join(job.Dir, "oracles.json"), ost); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	outputs := func(n int) schema.ScoreOutputs {
		o := schema.ScoreOutputs{Margins: make([]float64, n), Correct: make([]int, n)}
		for i := range n {
			o.Margins[i] = rng.NormFloat64()
			o.Correct[i] = rng.IntN(2)
		}
		return o
	}
	for _, tk := range job.tasks() {
		res := schema.ScoreTask{Schema: schema.ScoreTaskSchema, Settings: r.digest[tk.kind], Kind: tk.kind, Index: tk.index, Seed: tk.seed,
			ModelSHA256: strings.Repeat("0", 64), Forget: outputs(len(job.Suite.Forget)), Retain: outputs(len(r.retain)), Test: outputs(len(r.test))}
		if err := writeJSON(r.taskPath(tk), res); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGatherWritesOnlyItsOutputs (issue 45, item 10): gathering a finished
// audit with --json and --html elsewhere reads the results folder and
// writes nothing into it, so a folder on read-only storage can be gathered
// again; outfile's TestCheckResultsDirReadOnlyMount shows the check
// before it accepts such a folder.
func TestGatherWritesOnlyItsOutputs(t *testing.T) {
	root := t.TempDir()
	job := testJob(t, filepath.Join(root, "audit"))
	finishedAudit(t, job)
	before := tree(t, job.Dir)
	job.Gather, job.Bootstrap.Resamples = true, -1 // no intervals: the test is about files
	job.JSONPath, job.ReportPath = filepath.Join(root, "elsewhere.json"), filepath.Join(root, "elsewhere.html")
	o, err := Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if o.Report == nil || len(o.Report.Forget) != len(job.Suite.Forget) || o.JSONPath != job.JSONPath {
		t.Fatalf("gathered %+v, want a report of %d forget examples at %s", o, len(job.Suite.Forget), job.JSONPath)
	}
	for _, p := range []string{job.JSONPath, job.ReportPath} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if after := tree(t, job.Dir); after != before {
		t.Errorf("gathering changed the results folder:\n%s\nwas:\n%s", after, before)
	}
}
