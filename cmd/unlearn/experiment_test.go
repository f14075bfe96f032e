package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestExperimentSmall runs a one-seed grid (tiny training recipe), resumes
// it from the cache without doing any work, and rebuilds the table from
// results.jsonl byte for byte.
func TestExperimentSmall(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "exp")
	// notes is relative to the experiment file's folder.
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("## Discussion\n\nHand-written words."), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "exp.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`architecture: %s
title: Small grid
notes: notes.md
train: {epochs: 1, lr: 0.05, weight_decay: 5e-4}
forget_sets: [{name: non-iid, kind: non-iid, classes: [2, 5], fraction: 0.5}]
seeds: [0]
threads: 2
no_mia: true
out: %s
methods:
  - {name: DEL, method: del, budgets: [0.3], epochs: 1}
  - {name: DEL (auto), method: del, budgets: [0.3], schedule: auto, max_epochs: 2}
  - {name: Default, default: true}
`, model(t), out)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "experiment", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	results, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(results, []byte("\n")); n != 4 {
		t.Fatalf("%d records, want the oracle and three runs:\n%s", n, results)
	}
	// The auto row records what the schedule chose; the fixed row trained
	// without holding out (no proxies in its metrics).
	lines := strings.Split(strings.TrimSpace(string(results)), "\n")
	if !strings.Contains(lines[2], `"schedule":"auto"`) || !strings.Contains(lines[2], `"stop":"`) || strings.Contains(lines[1], `"schedule"`) {
		t.Errorf("records:\n%s", results)
	}
	// The default row ran what the main command runs without choices.
	var def experiment.Record
	if err := json.Unmarshal([]byte(lines[3]), &def); err != nil {
		t.Fatal(err)
	}
	rec, _ := unlearn.LookupMethod(unlearn.Recommended.Method)
	if want := rec.Algorithm; want == "" || def.Name != "Default" || def.Algorithm != want ||
		(def.Schedule == unlearn.ScheduleAuto) != (unlearn.Recommended.Schedule == unlearn.ScheduleAuto) {
		t.Errorf("default row: %s, algorithm %s, schedule %q; want algorithm %s, schedule %s", def.Name, def.Algorithm, def.Schedule, want, unlearn.Recommended.Schedule)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "runs", "run-*", "metrics.json"))
	withProxies := 0
	for _, p := range runs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(`"proxies"`)) {
			withProxies++
		}
	}
	// Every step streams its log into its directory, epoch by epoch,
	// ending in its result.
	for _, p := range runs {
		lg, err := os.ReadFile(filepath.Join(filepath.Dir(p), "log.jsonl"))
		if err != nil || !bytes.Contains(lg, []byte(`"event":"result"`)) || !bytes.Contains(lg, []byte(`"event":"epoch"`)) {
			t.Errorf("%s: log.jsonl without a result event (%v): %.300s", filepath.Dir(p), err, lg)
		}
	}
	// The auto row and the default row (the main command reports the
	// proxies unless told not to); the fixed row trains on the whole retain set.
	if len(runs) != 3 || withProxies != 2 {
		t.Errorf("%d run metrics, %d with proxies; want 3 and 2", len(runs), withProxies)
	}
	md, err := os.ReadFile(filepath.Join(out, "RESULTS.md"))
	if err != nil || !bytes.Contains(md, []byte("| Retrain (oracle) |")) || !bytes.Contains(md, []byte(" | del + rft | 0.3 |")) ||
		!bytes.Contains(md, []byte(" | del + rft, auto: ")) || !bytes.Contains(md, []byte(" ★ |")) ||
		!bytes.Contains(md, []byte("**Closest to the oracle**")) || !bytes.Contains(md, []byte("| 1 | ")) ||
		!bytes.Contains(md, []byte("# Small grid\n")) || !bytes.Contains(md, []byte("Reproduce: `unlearn experiment --config ")) ||
		!bytes.HasSuffix(md, []byte("## Discussion\n\nHand-written words.\n")) {
		t.Fatalf("RESULTS.md (%v):\n%s", err, md)
	}
	// Resume: everything cached, nothing appended.
	r = runCLI(t, "experiment", "--config", cfg)
	if r.code != 0 || strings.Contains(r.stderr, "running") || strings.Contains(r.stderr, "training") || !strings.Contains(r.stderr, "cached") {
		t.Fatalf("resume: exit %d, stderr %s", r.code, r.stderr)
	}
	again, _ := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if !bytes.Equal(again, results) {
		t.Fatal("resuming appended records")
	}
	// results.jsonl alone is the cache of record: without runs/ (a fresh
	// clone that commits the results but not the models) nothing is
	// trained or run again, not even the original.
	if err := os.RemoveAll(filepath.Join(out, "runs")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "experiment", "--config", cfg)
	if r.code != 0 || strings.Contains(r.stderr, "running") || strings.Contains(r.stderr, "training") ||
		strings.Count(r.stderr, "cached (results.jsonl)") != 4 {
		t.Fatalf("resume without runs/: exit %d, stderr %s", r.code, r.stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "results.jsonl")); !bytes.Equal(again, results) {
		t.Fatal("resuming without runs/ appended records")
	}
	if m, _ := filepath.Glob(filepath.Join(out, "runs", "*", "model.onnx")); len(m) != 0 {
		t.Fatalf("resuming without runs/ wrote models: %v", m)
	}
	// A run without a record then retrains its seed's original (the same
	// bits: same seed, threads and machine) but not the oracle, whose
	// metrics results.jsonl holds, and measures against that record. Its
	// time is compared with the oracle's training time on this machine:
	// the oracle's record says it trained elsewhere, so it is retrained
	// once for its time.
	var fixed, orc experiment.Record
	if err := json.Unmarshal([]byte(lines[1]), &fixed); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[0]), &orc); err != nil {
		t.Fatal(err)
	}
	if orc.Kind != "oracle" || orc.Machine == "" || fixed.Machine != orc.Machine || fixed.OriginalSHA256 == "" {
		t.Fatalf("records without their machine or original: %s\n%s", lines[0], lines[1])
	}
	orc.Machine = "elsewhere"
	ob, _ := json.Marshal(orc)
	rest := strings.Join(append([]string{string(ob)}, lines[2:]...), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(out, "results.jsonl"), []byte(rest), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "experiment", "--config", cfg)
	if r.code != 0 || strings.Count(r.stderr, "training") != 2 || !strings.Contains(r.stderr, "original (seed 0)") ||
		!strings.Contains(r.stderr, "timed on this machine") ||
		strings.Count(r.stderr, "running") != 1 || strings.Count(r.stderr, "cached (results.jsonl)") != 3 {
		t.Fatalf("one run missing: exit %d, stderr %s", r.code, r.stderr)
	}
	recs, err := experiment.ReadRecords(filepath.Join(out, "results.jsonl"))
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records (%v), want 4", len(recs), err)
	}
	rerun := recs[3]
	if rerun.Key != fixed.Key || rerun.OriginalSHA256 != fixed.OriginalSHA256 || fmt.Sprint(rerun.Accuracy) != fmt.Sprint(fixed.Accuracy) ||
		fmt.Sprint(rerun.Delta) != fmt.Sprint(fixed.Delta) {
		t.Errorf("rerun record\n%+v\nwant the first run's original and numbers\n%+v", rerun, fixed)
	}
	timed, _ := filepath.Glob(filepath.Join(out, "runs", "oracle-time-*", "done.json"))
	var done struct {
		TrainS float64 `json:"train_s"`
	}
	if len(timed) != 1 || readJSON(timed[0], &done) != nil || done.TrainS <= 0 || rerun.OracleSeconds != done.TrainS {
		t.Errorf("oracle timings %v (%+v); the rerun's oracle seconds %g should be the retimed oracle's", timed, done, rerun.OracleSeconds)
	}
	// A record of settings the config no longer has (here: a run under
	// another key, as an older auto rule leaves behind) stays out of the
	// table: the byte-for-byte check below covers it.
	var stale map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &stale); err != nil {
		t.Fatal(err)
	}
	stale["key"], stale["name"] = "000000000005a1e0", "Stale row"
	sb, _ := json.Marshal(stale)
	os.WriteFile(filepath.Join(out, "results.jsonl"), append(results, append(sb, '\n')...), 0o644)
	os.Remove(filepath.Join(out, "RESULTS.md"))
	if r = runCLI(t, "experiment", "--config", cfg, "--report-only"); r.code != 0 {
		t.Fatalf("report-only: exit %d: %s", r.code, r.stderr)
	}
	if md2, _ := os.ReadFile(filepath.Join(out, "RESULTS.md")); !bytes.Equal(md, md2) {
		t.Fatal("--report-only did not reproduce RESULTS.md byte for byte")
	}
	bad := writeFile(t, "bad.yaml", []byte("architecture: x.onnx\nseedz: [0]\n"))
	wantError(t, runCLI(t, "experiment", "--config", bad), exitUsage, "bad.yaml", "seedz")
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// TestExperimentScore runs a grid with a score block: after the grid, the
// two scored rows are audited against K oracles trained once and shared
// (one oracles folder with K task files), each row's score.json holds K
// unlearned models and the same retrained side, RESULTS.md shows both
// rankings, and a rerun finds the audits cached.
func TestExperimentScore(t *testing.T) {
	testutil.RequireORT(t)
	data, _ := tinyFashion(t, 600, 200)
	out := filepath.Join(t.TempDir(), "exp")
	cfg := writeFile(t, "exp.yaml", []byte(fmt.Sprintf(`architecture: %s
data: %s
train: {epochs: 1, lr: 0.05, weight_decay: 5e-4}
forget_sets: [{name: non-iid, kind: non-iid, classes: [2, 5], fraction: 0.5}, {name: iid, kind: iid, fraction: 0.05}]
seeds: [0]
threads: 2
out: %s
methods:
  - {name: Finetune, method: finetune, epochs: 1}
  - {name: DEL, method: del, budgets: [0.3], epochs: 1}
  - {name: SSD, method: ssd}
score: {k: 2, forget_sets: [non-iid], methods: [Finetune, DEL], retain_sample: 50, test_sample: 60}
`, model(t), data, out)))
	r := runCLI(t, "experiment", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	oracles, _ := filepath.Glob(filepath.Join(out, "score", "non-iid-seed0", "oracles-*", "tasks", "oracle-*.json"))
	scores, _ := filepath.Glob(filepath.Join(out, "score", "non-iid-seed0", "*", "score.json"))
	if len(oracles) != 2 || len(scores) != 2 {
		t.Fatalf("%d oracle tasks and %d score files, want 2 and 2 (K oracles shared by the two rows): %v %v", len(oracles), len(scores), oracles, scores)
	}
	var reps [2]schema.ScoreReport
	for i, p := range scores {
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &reps[i]); err != nil {
			t.Fatal(err)
		}
		if reps[i].Settings.Setup.K != 2 || len(reps[i].Models) != 4 || len(reps[i].Retain) != 50 || len(reps[i].Test) != 60 {
			t.Fatalf("%s: K %d, %d models, %d retain and %d test examples", p, reps[i].Settings.Setup.K, len(reps[i].Models), len(reps[i].Retain), len(reps[i].Test))
		}
	}
	if reps[0].Accuracy.Retrained != reps[1].Accuracy.Retrained || reps[0].Settings.Setup.Method.Algorithm == reps[1].Settings.Setup.Method.Algorithm {
		t.Fatalf("the rows' retrained sides differ (%+v, %+v) or they audited one algorithm (%s)", reps[0].Accuracy.Retrained,
			reps[1].Accuracy.Retrained, reps[0].Settings.Setup.Method.Algorithm)
	}
	md, err := os.ReadFile(filepath.Join(out, "RESULTS.md"))
	if err != nil || !bytes.Contains(md, []byte("## Per-example forgetting score (K = 2)")) || !bytes.Contains(md, []byte("### non-iid\n")) ||
		!bytes.Contains(md, []byte("| rank by score | rank by MIA |")) || !bytes.Contains(md, []byte("\n| Finetune | ")) || !bytes.Contains(md, []byte("\n| DEL | ")) ||
		bytes.Contains(md, []byte("### iid\n")) || bytes.Contains(md, []byte("\n| SSD | 0.")) {
		t.Fatalf("RESULTS.md (%v):\n%s", err, md)
	}
	r = runCLI(t, "experiment", "--config", cfg)
	if r.code != 0 || strings.Contains(r.stderr, "running") || strings.Contains(r.stderr, "training") || strings.Count(r.stderr, "score of ") != 2 {
		t.Fatalf("resume: exit %d, want the two audits cached: %s", r.code, r.stderr)
	}
	// A bad score block is refused before any work, naming the field.
	y, _ := os.ReadFile(cfg)
	bad := writeFile(t, "bad.yaml", []byte(strings.Replace(string(y), "methods: [Finetune, DEL]", "methods: [Finetune, Nope]", 1)))
	wantError(t, runCLI(t, "experiment", "--config", bad), exitUsage, "score", `"Nope"`)
}

// TestExperimentShards runs a two-seed grid as two shards in separate
// processes (one taking its index from JOB_COMPLETION_INDEX), each
// appending its own seed's records to its own file and writing no table,
// and gathers them with --report-only: the records (seconds and machine
// aside) equal a single process's, and so does RESULTS.md's table of
// accuracies.
func TestExperimentShards(t *testing.T) {
	testutil.RequireORT(t)
	data, _ := tinyFashion(t, 300, 100)
	root := t.TempDir()
	config := func(out string) string {
		return writeFile(t, filepath.Base(out)+".yaml", []byte(fmt.Sprintf(`architecture: %s
data: %s
train: {epochs: 1, lr: 0.05}
forget_sets: [{name: iid, kind: iid, fraction: 0.1}]
seeds: [0, 1]
threads: 1
no_mia: true
out: %s
methods:
  - {name: DEL, method: del, budgets: [0.3], epochs: 1}
  - {name: SSD, method: ssd}
`, model(t), data, out)))
	}
	sharded, single := filepath.Join(root, "sharded"), filepath.Join(root, "single")
	cs, c1 := config(sharded), config(single)
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "JOB_COMPLETION_INDEX=") && !strings.HasPrefix(e, "SLURM_ARRAY_TASK_ID=") {
			env = append(env, e)
		}
	}
	errs := make(chan string, 2)
	for i := range 2 {
		go func() {
			cmd := exec.Command(binPath, "experiment", "--config", cs, "--shards", "2")
			cmd.Env = env
			if i == 0 {
				cmd.Env = append(env, "JOB_COMPLETION_INDEX=0")
			} else {
				cmd.Args = append(cmd.Args, "--shard", "1")
			}
			out, err := cmd.CombinedOutput()
			switch {
			case err != nil:
				errs <- fmt.Sprintf("shard %d: %v: %s", i, err, out)
			case strings.Contains(string(out), fmt.Sprintf("(seed %d)", 1-i)):
				errs <- fmt.Sprintf("shard %d ran the other shard's seed: %s", i, out)
			default:
				errs <- ""
			}
		}()
	}
	if r := runCLI(t, "experiment", "--config", c1); r.code != 0 {
		t.Fatalf("single process: exit %d: %s", r.code, r.stderr)
	}
	for range 2 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
	if _, err := os.Stat(filepath.Join(sharded, "RESULTS.md")); err == nil {
		t.Fatal("a shard wrote RESULTS.md; only the gathering step reports")
	}
	for i := range 2 {
		recs, err := experiment.ReadRecords(filepath.Join(sharded, fmt.Sprintf("results.shard-%d.jsonl", i)))
		if err != nil || len(recs) != 3 {
			t.Fatalf("shard %d: %d records (%v), want its seed's oracle and 2 runs", i, len(recs), err)
		}
		for _, rec := range recs {
			if rec.Seed != uint64(i) {
				t.Fatalf("shard %d recorded seed %d", i, rec.Seed)
			}
		}
	}
	if r := runCLI(t, "experiment", "--config", cs, "--report-only"); r.code != 0 {
		t.Fatalf("report: exit %d: %s", r.code, r.stderr)
	}
	strip := func(dir string) map[string]string {
		recs, err := experiment.ReadRecords(filepath.Join(dir, "results.jsonl"))
		if dir == sharded {
			recs = nil
			for i := range 2 {
				r, _ := experiment.ReadRecords(filepath.Join(dir, fmt.Sprintf("results.shard-%d.jsonl", i)))
				recs = append(recs, r...)
			}
		}
		if err != nil && dir == single {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, rec := range recs {
			// Keys hold the original's path, which differs between the two
			// folders: the step is named by what it is.
			b, _ := json.Marshal([]any{rec.Accuracy, rec.Delta})
			out[fmt.Sprint(rec.Kind, " ", rec.ForgetSet, " ", rec.Seed, " ", rec.Name)] = string(b)
		}
		return out
	}
	if a, b := strip(sharded), strip(single); len(a) != 6 || !reflect.DeepEqual(a, b) {
		t.Fatalf("sharded records differ from the single process's:\n%v\n%v", a, b)
	}
	table := func(dir string) string {
		md, err := os.ReadFile(filepath.Join(dir, "RESULTS.md"))
		if err != nil {
			t.Fatal(err)
		}
		// Up to the time columns: the accuracies and Δs of every row.
		var rows []string
		for _, l := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(l, "| Retrain") || strings.HasPrefix(l, "| DEL") || strings.HasPrefix(l, "| SSD") {
				cells := strings.Split(l, "|")
				rows = append(rows, strings.Join(cells[:8], "|"))
			}
		}
		return strings.Join(rows, "\n")
	}
	if a, b := table(sharded), table(single); a == "" || a != b {
		t.Fatalf("RESULTS.md rows differ:\n%s\n---\n%s", a, b)
	}
}

// TestExperimentRecordsNotThroughLink: a results.jsonl that is a symbolic
// link is refused before the first step, and the link's target is left as
// it was.
func TestExperimentRecordsNotThroughLink(t *testing.T) {
	testutil.RequireORT(t)
	data, _ := tinyFashion(t, 200, 60)
	out := filepath.Join(t.TempDir(), "exp")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	target := writeFile(t, "precious.jsonl", nil) // read as no records; must stay empty
	if err := os.Symlink(target, filepath.Join(out, "results.jsonl")); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "exp.yaml", []byte(fmt.Sprintf(`architecture: %s
data: %s
train: {epochs: 1, lr: 0.05}
forget_sets: [{name: iid, kind: iid, fraction: 0.1}]
seeds: [0]
threads: 1
no_mia: true
out: %s
methods: [{name: SSD, method: ssd}]
`, model(t), data, out)))
	wantError(t, runCLI(t, "experiment", "--config", cfg), exitError, "the experiment's records", "symbolic link")
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Fatalf("the link's target was written: %q", b)
	}
}
