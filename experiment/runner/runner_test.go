package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/unlearn"
	"github.com/unlearn-tool/unlearn/unlearn/scoring"
)

// pinConfigs are experiment files whose steps' keys TestGridKeysPinned
// pins. Paths are relative to this folder, as in the run that computed the
// keys (their strings are part of the keys: out holds the original's path).
var pinConfigs = []string{`architecture: ../../testdata/resnet_small_train.onnx
data: ../../testdata/fashion
train: {epochs: 2, lr: 0.05, weight_decay: 5e-4}
forget_sets:
  - {name: iid, kind: iid, fraction: 0.1}
  - {name: non-iid, kind: non-iid, classes: [2, 5], fraction: 0.5}
seeds: [0, 3]
out: pin-out
methods:
  - {name: Finetune, method: finetune, epochs: 3, lr: 0.05}
  - {name: DEL, method: del, budgets: [0.05, 0.3], epochs: 3, lr: 0.05}
  - {name: SSD, method: ssd}
  - {name: Mine, strategy: salloc, algorithm: rft, budgets: [0.3]}
  - {name: DEL (auto), method: del, budgets: [0.3], schedule: auto}
  - {name: Finetune (auto), method: finetune, schedule: auto, max_epochs: 4}
  - {name: Default, default: true}
`, `model: ../../testdata/resnet_small_train.onnx
data: ../../testdata/fashion
train: {epochs: 1, lr: 0.01, batch_size: 64, momentum: 0.5, schedule: constant}
forget_sets:
  - {name: few, kind: iid, fraction: 0.02}
seeds: [7]
no_mia: true
out: pin-out2
methods:
  - {name: NegGrad+, method: neggrad+, epochs: 1, lr: 0.01}
  - {name: Default, default: true}
`}

// TestGridKeysPinned lists the grid of two configs (a dry run, which
// writes nothing) and checks the keys of representative steps against
// pinned values: oracles, fixed rows with and without a budget, a row with
// a strategy and algorithm instead of a method, auto rows, default rows, a
// trained and a given original, with and without the attacks. Committed
// results.jsonl files are cached by these keys; a changed key silently
// reruns their grid. The oracles' keys are those cmd/unlearn's subprocess
// runner computed; the runs' keys changed once, on purpose, when they
// stopped holding the original's path (content keys, November 2026; the
// committed records were re-keyed then). The default rows' keys hold
// defaultKey() and the auto rows' unlearn.AutoVersion by
// design: changing either changes them (and this test) on purpose.
func TestGridKeysPinned(t *testing.T) {
	want := []map[string]string{{
		"oracle iid (seed 0)":                  "cae13c0cae310669",
		"oracle non-iid (seed 0)":              "f213596658da1c74",
		"oracle iid (seed 3)":                  "7f3af3d6d61318db",
		"oracle non-iid (seed 3)":              "ad09da01b793b00b",
		"Finetune on iid (seed 0)":             "c24ab2b8456af9a3",
		"Finetune on non-iid (seed 3)":         "8059ab5b61cf2290",
		"DEL α=0.05 on iid (seed 0)":           "9651d6108857bf48",
		"DEL α=0.3 on iid (seed 0)":            "850299de9412c141",
		"DEL α=0.05 on non-iid (seed 3)":       "4616f7cf103cf4c5",
		"DEL α=0.3 on non-iid (seed 0)":        "20350d2ab08c66d8",
		"SSD on iid (seed 0)":                  "1034a77d48e02e06",
		"SSD on non-iid (seed 3)":              "54d5fff4ebda91b0",
		"Mine α=0.3 on iid (seed 0)":           "0fa76b959b656f38",
		"Mine α=0.3 on non-iid (seed 3)":       "ad1c9d6314038e73",
		"DEL (auto) α=0.3 on iid (seed 0)":     "b58007dc63904ec2",
		"DEL (auto) α=0.3 on non-iid (seed 3)": "b8243fa06ecd3a21",
		"Finetune (auto) on iid (seed 0)":      "63037476486a7d6a",
		"Finetune (auto) on non-iid (seed 3)":  "11e5a64c599a6c89",
		"Default on iid (seed 0)":              "50190bf7caaceeae",
		"Default on non-iid (seed 3)":          "379061ec372d55e0",
	}, {
		"oracle few (seed 7)":      "f5140aaf70cfb32f",
		"NegGrad+ on few (seed 7)": "1a5092c915d84bcc",
		"Default on few (seed 7)":  "345f2c1dece3c858",
	}}
	wantSteps := []int{4 + 2*2*8, 1 + 2}
	if got := defaultKey(); got != "--method del --budget 0.1 --depth-floor 0.4 --schedule auto (auto rule 9)" {
		t.Logf("the recommended default is now %q: the default rows' keys below change with it, by design", got)
	}
	for i, y := range pinConfigs {
		p := filepath.Join(t.TempDir(), "exp.yaml")
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := experiment.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		out, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Step: func(what, state, key string) {
			if key != "" {
				got[what] = key
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Keys) != wantSteps[i] || len(got) != wantSteps[i] {
			t.Errorf("config %d: %d keys, %d steps with keys; want %d", i, len(out.Keys), len(got), wantSteps[i])
		}
		for what, k := range want[i] {
			if got[what] != k {
				t.Errorf("config %d: %s: key %q, want %s", i, what, got[what], k)
			}
		}
		if _, err := os.Stat(cfg.Out); err == nil {
			t.Errorf("the dry run created %s", cfg.Out)
			os.RemoveAll(cfg.Out)
		}
	}
}

// TestChoose checks the mapping of method rows onto the main command's
// choices: what the flags of the subprocess runner (recipeArgs) said.
func TestChoose(t *testing.T) {
	c, err := Choose(experiment.Method{Name: "DEL", Method: "del", Budgets: []float64{0.3}, Epochs: 3, LR: 0.05}, 0.3)
	if err != nil || c.Method != "del" || c.Strategy != "del" || c.Algorithm != "rft" || c.Budget != 0.3 ||
		!reflect.DeepEqual(c.Recipe, (unlearn.Recipe{Epochs: unlearn.Some(3), LR: unlearn.Some(0.05), Schedule: unlearn.ScheduleFixed, NoProxies: true})) {
		t.Errorf("fixed row: %+v (%v)", c, err)
	}
	c, err = Choose(experiment.Method{Name: "Mine", Strategy: "salloc", Algorithm: "finetune", Schedule: "auto", MaxEpochs: 4}, 0)
	if err != nil || c.Method != unlearn.Recommended.Method || c.Strategy != "salloc" || c.Algorithm != "finetune" ||
		c.Budget != unlearn.Recommended.Budget || !reflect.DeepEqual(c.Recipe, (unlearn.Recipe{Schedule: unlearn.ScheduleAuto, MaxEpochs: unlearn.Some(4)})) {
		t.Errorf("auto row with a strategy and algorithm: %+v (%v)", c, err)
	}
	c, err = Choose(experiment.Method{Name: "Default", Default: true}, 0)
	rec, _ := unlearn.LookupMethod(unlearn.Recommended.Method)
	if err != nil || c.Method != rec.Name || c.Algorithm != rec.Algorithm || c.Budget != unlearn.Recommended.Budget || !reflect.DeepEqual(c.Recipe, (unlearn.Recipe{})) {
		t.Errorf("default row: %+v (%v)", c, err)
	}
	c, err = Choose(experiment.Method{Name: "Default (utility 1.5)", Default: true, UtilityTolerance: 0.015}, 0)
	if err != nil || c.Method != rec.Name || !reflect.DeepEqual(c.Recipe, (unlearn.Recipe{UtilityTolerance: unlearn.Some(0.015)})) {
		t.Errorf("default row with a utility tolerance: %+v (%v)", c, err)
	}
	if cfg, err := unlearn.Configure(c.Algorithm, c.Recipe); err != nil || cfg.Schedule != unlearn.ScheduleAuto || cfg.Auto.UtilityTolerance != 0.015 {
		t.Errorf("default row with a utility tolerance configures %+v (%v)", cfg.Auto, err)
	}
	c, err = Choose(experiment.Method{Name: "NG", Method: "neggrad+", Schedule: "auto", UtilityTolerance: 0.02}, 0)
	if err != nil || !reflect.DeepEqual(c.Recipe, (unlearn.Recipe{Schedule: unlearn.ScheduleAuto, UtilityTolerance: unlearn.Some(0.02)})) {
		t.Errorf("auto row with a utility tolerance: %+v (%v)", c, err)
	}
	c, err = Choose(experiment.Method{Name: "Aug", Method: "del", Augment: "pad=4,flip"}, 0)
	if err != nil || c.Augment != (data.Augment{CropPad: 4, Flip: true}) {
		t.Errorf("augmented row: %+v (%v)", c, err)
	}
	c, err = Choose(experiment.Method{Name: "Retrain", Method: "retrain", Epochs: 30, LR: 0.05, BatchSize: 32}, 0)
	if err != nil || c.Algorithm != "retrain" || c.BatchSize != 32 {
		t.Errorf("retrain row with a batch size: %+v (%v)", c, err)
	}
	if c, _ := Choose(experiment.Method{Name: "Default", Default: true, BatchSize: 32}, 0); c.BatchSize != 0 {
		t.Errorf("a default row took batch_size %d (Load refuses it; Choose leaves it to the default)", c.BatchSize)
	}
	for name, m := range map[string]experiment.Method{
		"args":              {Name: "x", Method: "del", Args: []string{"--classifier", "fc"}},
		"unknown method":    {Name: "x", Method: "amnesia"},
		"unknown strategy":  {Name: "x", Method: "del", Strategy: "dartboard"},
		"auto for ssd":      {Name: "x", Method: "ssd", Schedule: "auto"},
		"augment for scrub": {Name: "x", Algorithm: "scrub", Method: "del", Augment: "flip"},
		"bad augment":       {Name: "x", Method: "del", Augment: "pad=x"},
	} {
		if _, err := Choose(m, 0); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "args" && !errors.Is(err, experiment.ErrConfig) {
			t.Errorf("args: %v, want ErrConfig", err)
		}
	}
}

// pinnedConfig loads the first of the pinned configs from a file of its own.
func pinnedConfig(t *testing.T) (*experiment.Config, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "exp.yaml")
	if err := os.WriteFile(p, []byte(pinConfigs[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := experiment.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, p
}

// TestShardChecked: a shard outside [0, shards), a negative number of
// shards, a shard without shards or more shards than seeds is refused
// before any step.
func TestShardChecked(t *testing.T) {
	cfg, p := pinnedConfig(t)
	var err error
	for _, c := range [][2]int{{2, 2}, {-1, 2}, {0, -1}, {1, 0}} {
		if _, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Shard: c[0], Shards: c[1]}); !errors.Is(err, experiment.ErrConfig) {
			t.Errorf("shard %d of %d: %v, want ErrConfig", c[0], c[1], err)
		}
	}
	if _, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Shard: 1, Shards: 2}); err != nil {
		t.Errorf("shard 1 of 2: %v", err)
	}
	// More shards than the config's two seeds: shards 2.. would run
	// nothing and exit 0 (issue 45, item 9); the error names both counts
	// and what to set. Negative --shards names the flag.
	_, err = Run(context.Background(), Job{Config: cfg, ConfigPath: p, DryRun: true, Shard: 5, Shards: 1000000000})
	for _, want := range []string{"--shards 1000000000: more shards than seeds (1000000000 > 2 in " + p, "give --shards 2 or fewer", "completions: 2", "--array=0-1"} {
		if !errors.Is(err, experiment.ErrConfig) || !strings.Contains(flagtext.Render(err), want) {
			t.Errorf("shard 5 of 1000000000: %v, want ErrConfig saying %q", err, want)
		}
	}
	if _, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Shards: -3}); !errors.Is(err, experiment.ErrConfig) || !strings.Contains(flagtext.Render(err), "--shards -3: want 0") {
		t.Errorf("--shards -3: %v", err)
	}
}

// TestDeviceChecked (issue 43 item 4): an unknown device is a config error
// before any step; cpu and cuda are taken (a dry run loads no runtime; a
// cuda run needs a GPU machine, bench/gpu_check.sh).
func TestDeviceChecked(t *testing.T) {
	cfg, _ := pinnedConfig(t)
	if _, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Device: "tpu"}); !errors.Is(err, experiment.ErrConfig) || !strings.Contains(err.Error(), `device "tpu"`) {
		t.Errorf("device tpu: %v", err)
	}
	for _, d := range []string{"", "cpu", "cuda"} {
		if _, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Device: d}); err != nil {
			t.Errorf("device %q, dry run: %v", d, err)
		}
	}
}

// byConfigOrder: records of a set the config lists first come first even
// when another file held them later; within a set the order is kept; a
// set the config no longer lists goes last.
func TestByConfigOrder(t *testing.T) {
	recs := []experiment.Record{{ForgetSet: "one", Key: "1"}, {ForgetSet: "gone", Key: "2"}, {ForgetSet: "ten", Key: "3"}, {ForgetSet: "one", Key: "4"}, {ForgetSet: "ten", Key: "5"}}
	byConfigOrder(recs, []experiment.ForgetSet{{Name: "ten"}, {Name: "one"}})
	var got string
	for _, r := range recs {
		got += r.Key
	}
	if got != "35142" {
		t.Errorf("order %s, want 35142", got)
	}
}

// TestOutsideModels runs a grid on an original and an oracle trained
// outside the tool, as the ResNet-18 regime's script writes them: the
// original's path and the ids file's hold {seed}, the oracle is evaluated
// as it is (never retrained) and its training time comes from its sidecar,
// which times the runs only when it names this machine.
func TestOutsideModels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a model")
	}
	dir := t.TempDir()
	copyFile := func(src, dst string) { copyTestFile(t, src, dst) }
	copyFile("../../testdata/resnet_small_train.onnx", filepath.Join(dir, "original-seed4.onnx"))
	copyFile("../../testdata/demo/forget_nonIID.txt", filepath.Join(dir, "forget-seed4.txt"))
	oracleSum, err1 := fsread.HashPath("../../testdata/demo/oracle_resnet_small.onnx")
	dataSum, err2 := fsread.HashPath("../../testdata/fashion")
	origSum, err3 := fsread.HashPath("../../testdata/resnet_small_train.onnx")
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "original-seed4.json"), []byte(fmt.Sprintf(`{"train_s": 99, "threads": 2, "machine": "m", "onnx_sha256": %q, "data_sha256": %q}`,
		origSum, dataSum)), 0o644)
	for i, c := range []struct {
		machine string
		threads int
		want    float64 // the runs' oracle seconds
	}{{machineID(), 2, 123.5}, {"another machine", 2, 0}, {machineID(), 1, 0}} {
		machine := c.machine
		sub := filepath.Join(dir, fmt.Sprint(i))
		os.MkdirAll(sub, 0o755)
		copyFile("../../testdata/demo/oracle_resnet_small.onnx", filepath.Join(sub, "oracle-seed4.onnx"))
		side := fmt.Sprintf(`{"train_s": 123.5, "threads": %d, "machine": %q, "onnx_sha256": %q, "data_sha256": %q, "epochs": [{"epoch": 1}]}`,
			c.threads, machine, oracleSum, dataSum)
		os.WriteFile(filepath.Join(sub, "oracle-seed4.json"), []byte(side), 0o644)
		p := filepath.Join(sub, "exp.yaml")
		os.WriteFile(p, []byte(fmt.Sprintf(`model: %s/original-seed{seed}.onnx
data: ../../testdata/fashion
train: {epochs: 1, lr: 0.05}
forget_sets:
  - {name: outside, kind: file, ids: "%s/forget-seed{seed}.txt", oracle: "%s/oracle-seed{seed}.onnx"}
seeds: [4]
no_mia: true
threads: 2
out: %s/out
methods:
  - {name: SSD, method: ssd}
`, dir, dir, sub, sub)), 0o644)
		cfg, err := experiment.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		if _, err := Run(context.Background(), Job{Config: cfg, Step: func(what, state, key string) {
			steps = append(steps, what+": "+state)
		}}); err != nil {
			t.Fatal(err)
		}
		set, err := readAll(cfg.Out)
		if err != nil || len(set.Records) != 2 {
			t.Fatalf("records %v (%v), want the oracle's and SSD's; steps %q", set, err, steps)
		}
		recs := set.Records
		for _, s := range steps {
			if strings.Contains(s, "training") {
				t.Errorf("step %q: an outside oracle is never trained by the tool", s)
			}
		}
		orc, run := recs[0], recs[1]
		if orc.Kind != "oracle" || orc.Seconds != 123.5 || orc.Machine != machine || orc.Forget != 400 {
			t.Errorf("oracle record %+v: want 123.5 s on %q, 400 ids", orc, machine)
		}
		if run.OracleSeconds != c.want {
			t.Errorf("sidecar machine %q, %d threads: the run's oracle seconds %g, want %g", machine, c.threads, run.OracleSeconds, c.want)
		}
		// The run's own peak memory (reset at its start): ONNX Runtime and
		// the data loaded, far under the machine.
		if m := run.PeakRSSMiB; !(m > 20 && m < 8192) {
			t.Errorf("run record peak_rss_mib %g", m)
		}
		// The whole command's time holds the unlearning's and the
		// evaluations around it.
		if !(run.CommandSeconds > run.Seconds) {
			t.Errorf("run record command_seconds %g, seconds %g", run.CommandSeconds, run.Seconds)
		}
		// The oracle's own metrics (the demo's oracle: 69.75 % on this
		// forget set, README's demo), not the original's.
		if f := orc.Accuracy["forget"]; f < 0.69 || f > 0.705 {
			t.Errorf("oracle forget accuracy %.4f, want the demo oracle's 0.6975", f)
		}
		// The report needs neither the data nor the models: its keys come
		// from the sidecars. Without the original's sidecar, its seed is
		// named as not trained yet.
		cfg.Data = filepath.Join(dir, "absent")
		os.Rename(filepath.Join(dir, "original-seed4.onnx"), filepath.Join(dir, "moved.onnx"))
		os.Rename(filepath.Join(sub, "oracle-seed4.onnx"), filepath.Join(sub, "moved.onnx"))
		out, err := Run(context.Background(), Job{Config: cfg, ReportOnly: true})
		if err != nil || !strings.Contains(out.Table, "SSD") {
			t.Errorf("report without data and models: %v", err)
		}
		os.Rename(filepath.Join(dir, "original-seed4.json"), filepath.Join(dir, "moved.json"))
		out, err = Run(context.Background(), Job{Config: cfg, ReportOnly: true})
		md, _ := os.ReadFile(filepath.Join(cfg.Out, "RESULTS.md"))
		if err != nil || strings.Contains(out.Table, "SSD") || !strings.Contains(string(md), "not trained): outside, seed 4.") {
			t.Errorf("report without the original and its sidecar: %v; RESULTS.md:\n%s", err, md)
		}
		os.Rename(filepath.Join(dir, "moved.json"), filepath.Join(dir, "original-seed4.json"))
		os.Rename(filepath.Join(dir, "moved.onnx"), filepath.Join(dir, "original-seed4.onnx"))
		os.Rename(filepath.Join(sub, "moved.onnx"), filepath.Join(sub, "oracle-seed4.onnx"))
	}
	// The keys hold no paths: the whole experiment moved (config, ids,
	// models, out folder) finds every step cached.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	dir, old := moved, dir
	sub0 := filepath.Join(moved, "0")
	y, err := os.ReadFile(filepath.Join(sub0, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sub0, "exp.yaml"), []byte(strings.ReplaceAll(string(y), old, moved)), 0o644)
	cfg, err := experiment.Load(filepath.Join(sub0, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	if _, err := Run(context.Background(), Job{Config: cfg, DryRun: true, Step: func(what, state, key string) {
		states = append(states, what+": "+state)
	}}); err != nil || len(states) != 2 || strings.Count(strings.Join(states, "\n"), "cached") != 2 {
		t.Errorf("the moved experiment: %v; steps %q, want both cached", err, states)
	}
	// A model that is not the one its sidecar names is refused before any
	// work, naming both files.
	sub := sub0
	copyFile("../../testdata/resnet_small_train.onnx", filepath.Join(sub, "oracle-seed4.onnx"))
	cfg.Out = filepath.Join(dir, "out-changed")
	_, err = Run(context.Background(), Job{Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "oracle-seed4.json") || !strings.Contains(err.Error(), "changed after its sidecar") {
		t.Errorf("a changed oracle: %v", err)
	}
	if _, err := os.Stat(cfg.Out); err == nil {
		if m, _ := filepath.Glob(filepath.Join(cfg.Out, "runs", "oracle-*")); len(m) > 0 {
			t.Errorf("a refused run left %v", m)
		}
	}
}

// The experiment file's bounds and schedules are the library's.
func TestBoundsMatchTheLibrary(t *testing.T) {
	if experiment.MaxScoreK != scoring.MaxK {
		t.Errorf("experiment.MaxScoreK %d, scoring.MaxK %d", experiment.MaxScoreK, scoring.MaxK)
	}
	for _, s := range []string{unlearn.TrainCosine, unlearn.TrainConstant} {
		p := filepath.Join(t.TempDir(), "c.yaml")
		text := "architecture: a.onnx\ntrain: {epochs: 1, lr: 0.1, schedule: " + s + "}\nforget_sets: [{name: f, kind: iid, fraction: 0.1}]\n" +
			"seeds: [0]\nout: o\nmethods: [{name: DEL, method: del}]\n"
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := experiment.Load(p); err != nil {
			t.Errorf("schedule %s: %v", s, err)
		}
	}
}

// TestReportNamesUntrainedOracles: a grid of outside oracles in progress
// (an oracle's sidecar not written yet, the model not trained) is listed by
// --dry-run and reported with --report-only, naming what is missing,
// instead of refused; a run still refuses it.
func TestReportNamesUntrainedOracles(t *testing.T) {
	dir := t.TempDir()
	fashion, err := filepath.Abs("../../testdata/fashion")
	if err != nil {
		t.Fatal(err)
	}
	ids := filepath.Join(dir, "ids-seed0.txt")
	if err := os.WriteFile(ids, []byte("0\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile("../../testdata/resnet_small_train.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "original-seed0.onnx"), orig, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "exp.yaml")
	if err = os.WriteFile(p, []byte(fmt.Sprintf(`title: in progress
data: %s
model: %s/original-seed{seed}.onnx
train: {epochs: 1, lr: 0.1}
forget_sets:
  - {name: iid, kind: file, ids: "%s/ids-seed{seed}.txt", oracle: "%s/oracle-seed{seed}.onnx"}
seeds: [0]
out: %s/out
methods:
  - {name: Default, default: true}
`, fashion, dir, dir, dir, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := experiment.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "results.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []string
	step := func(what, state, key string) { steps = append(steps, what+": "+state) }
	if _, err := Run(context.Background(), Job{Config: cfg, ConfigPath: p, DryRun: true, Step: step}); err != nil || !slices.Contains(steps, "oracle iid (seed 0): not trained yet (no oracle-seed0.json)") {
		t.Errorf("dry run: %v, steps %q", err, steps)
	}
	if _, err := Run(context.Background(), Job{Config: cfg, ConfigPath: p, ReportOnly: true}); err != nil {
		t.Fatalf("report: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "RESULTS.md"))
	if err != nil || !strings.Contains(string(b), "Not in the tables yet (their models are not trained): iid, seed 0.") {
		t.Errorf("RESULTS.md (%v):\n%s", err, b)
	}
	if _, err := Run(context.Background(), Job{Config: cfg, ConfigPath: p}); err == nil || !strings.Contains(err.Error(), "seed0") {
		t.Errorf("a run without the oracle's sidecar: %v", err)
	}
}

// TestMachineIDCountsTheMachine: the CPU count in a record's machine name
// is the machine's (the processors /proc/cpuinfo lists), not the
// process's affinity, so that a grid pinned to one core with taskset is
// timed against sidecars written on the same machine unpinned.
func TestMachineIDCountsTheMachine(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo:", err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "processor" {
			n++
		}
	}
	if id := machineID(); !strings.HasSuffix(id, fmt.Sprintf(", %d CPUs", n)) || strings.HasPrefix(id, ",") {
		t.Errorf("machine %q, want a CPU name and %d CPUs", id, n)
	}
}

// TestRowBatchSize: a row's batch_size reaches its training (a retraining
// row takes the batch of a recipe trained outside the tool), as
// metrics.json records it, while the evaluation keeps its own batch.
func TestRowBatchSize(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a model")
	}
	dir := t.TempDir()
	link := func(src, dst string) { copyTestFile(t, src, filepath.Join(dir, dst)) }
	link("../../testdata/resnet_small_train.onnx", "original-seed4.onnx")
	link("../../testdata/demo/forget_nonIID.txt", "forget-seed4.txt")
	link("../../testdata/demo/oracle_resnet_small.onnx", "oracle-seed4.onnx")
	oracleSum, err1 := fsread.HashPath("../../testdata/demo/oracle_resnet_small.onnx")
	dataSum, err2 := fsread.HashPath("../../testdata/fashion")
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "oracle-seed4.json"), []byte(fmt.Sprintf(`{"train_s": 50, "threads": 2, "machine": "m", "onnx_sha256": %q, "data_sha256": %q}`,
		oracleSum, dataSum)), 0o644)
	p := filepath.Join(dir, "exp.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf(`model: %[1]s/original-seed{seed}.onnx
data: ../../testdata/fashion
train: {epochs: 1, lr: 0.05}
forget_sets:
  - {name: outside, kind: file, ids: "%[1]s/forget-seed{seed}.txt", oracle: "%[1]s/oracle-seed{seed}.onnx"}
seeds: [4]
no_mia: true
threads: 2
out: %[1]s/out
methods:
  - {name: Retrain, method: retrain, epochs: 1, lr: 0.05, batch_size: 96}
`, dir)), 0o644)
	cfg, err := experiment.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Job{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	runs, _ := filepath.Glob(filepath.Join(cfg.Out, "runs", "run-*", "metrics.json"))
	if len(runs) != 1 {
		t.Fatalf("run folders %v, want one", runs)
	}
	b, err := os.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unlearning struct {
			BatchSize       int     `json:"batch_size"`
			ExamplesTrained int     `json:"examples_trained"`
			EpochsTrained   float64 `json:"epochs_trained"`
		} `json:"unlearning"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// 3,600 retain examples in batches of 96: 38 steps, the last one short.
	if u := doc.Unlearning; u.BatchSize != 96 || u.ExamplesTrained != 3600 {
		t.Errorf("metrics.json: batch_size %d, examples_trained %d; want 96 and one epoch of the 3,600 retain examples", u.BatchSize, u.ExamplesTrained)
	}
}

// copyTestFile copies src to dst.
func copyTestFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultKeyBytes: the default rows' key text, built from
// unlearn.RecommendedSettings, holds the bytes the keys were first written
// in (flag syntax, once unlearn.RecommendedString's), so that existing
// results.jsonl caches stay hits; TestGridKeysPinned pins the keys.
func TestDefaultKeyBytes(t *testing.T) {
	if got, want := defaultKey(), "--method del --budget 0.1 --depth-floor 0.4 --schedule auto (auto rule 9)"; got != want {
		t.Errorf("defaultKey() = %q, want %q: the default rows' cached records would be misses", got, want)
	}
}

// TestSettingsKeyCanonical: a row's algorithm settings key it by their
// canonical form (unlearn.Canonical), so that a value written as text or a
// number, and a name with underscores or hyphens, give one key; other
// values give another, and a row without settings keeps the key it had
// (TestGridKeysPinned).
func TestSettingsKeyCanonical(t *testing.T) {
	r := &state{cfg: &experiment.Config{}}
	key := func(s map[string]any) string {
		return r.runKey(experiment.Method{Name: "NG+", Method: "neggrad+", Settings: s}, 0, 0, "ids", "orig", "oracle")
	}
	a, b := key(map[string]any{"beta": 0.5}), key(map[string]any{"beta": "0.50"})
	if a != b || a != key(map[string]any{"beta": "5e-1"}) {
		t.Errorf("beta 0.5 keyed %s and %s", a, b)
	}
	if c := key(map[string]any{"scrub_alpha": 1}); c != key(map[string]any{"scrub-alpha": 1.0}) {
		t.Errorf("scrub_alpha and scrub-alpha keyed apart")
	}
	if a == key(map[string]any{"beta": 0.25}) || a == key(nil) {
		t.Error("other settings, or none, keyed as beta 0.5")
	}
	if _, err := Choose(experiment.Method{Name: "X", Method: "del", Settings: map[string]any{"beta": 0.5}}, 0); err == nil ||
		!strings.Contains(err.Error(), "method X: beta: rft does not read it") {
		t.Errorf("a setting of another algorithm: %v", err)
	}
}
