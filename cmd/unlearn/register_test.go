package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/unlearn"
)

var (
	registerScale sync.Once
	scaleMu       sync.Mutex
	scaleLR       []float64 // the rate each run of "scale" was given
	scalePower    []int     // and its own setting, scale-power
)

// TestRegisteredMethod registers, from outside package unlearn, an
// algorithm ("scale": multiply the masked elements by (1 − lr)^p, p its own
// setting scale-power, declared in its descriptor) and a method that pairs
// it with DEL's localization ("scale-del"), and runs the method by name
// with a common setting (lr) and its own (scale-power) given as flags of
// the main command and as keys of an experiment file's method row: the
// method is accepted in both, and the algorithm sees the settings' values.
func TestRegisteredMethod(t *testing.T) {
	registerScale.Do(func() {
		err := unlearn.Register(unlearn.Algorithm{Name: "scale", Summary: "test only: scale the masked elements",
			UsesForget: true, Settings: []unlearn.Setting{{Name: "scale-power", Default: 1, Help: "the power p"}},
			Run: func(r *unlearn.Runner) error {
				lr, p := r.Config().LR, unlearn.SettingOf[int](r.Config(), "scale-power")
				scaleMu.Lock()
				scaleLR, scalePower = append(scaleLR, lr), append(scalePower, p)
				scaleMu.Unlock()
				return scaleMasked(r, float32(math.Pow(1-lr, float64(p))))
			}})
		if err == nil {
			err = unlearn.RegisterMethod(unlearn.Method{Name: "scale-del", Strategy: "del", Algorithm: "scale"})
		}
		if err != nil {
			t.Fatal(err)
		}
	})
	if err := unlearn.RegisterMethod(unlearn.Method{Name: "scale-del", Strategy: "del", Algorithm: "scale"}); err == nil {
		t.Error("a method registered twice was accepted")
	}
	if err := unlearn.RegisterMethod(unlearn.Method{Name: "x", Strategy: "del", Algorithm: "nope"}); err == nil {
		t.Error("a method of an unknown algorithm was accepted")
	}
	seen := func() ([]float64, []int) {
		scaleMu.Lock()
		defer scaleMu.Unlock()
		s, p := scaleLR, scalePower
		scaleLR, scalePower = nil, nil
		return s, p
	}
	seen()
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	r := runInProcess(t, "--model", "testdata/resnet_small_train.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
		"--data", "testdata/fashion", "--method", "scale-del", "--lr", "0.25", "--scale-power", "2", "--budget", "0.05", "--no-mia",
		"--no-before", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("--method scale-del: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Unlearning struct{ Method, Strategy, Algorithm string } `json:"unlearning"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if u := doc.Unlearning; err != nil || u.Method != "scale-del" || u.Strategy != "del" || u.Algorithm != "scale" {
		t.Errorf("metrics.json: %+v (%v); want method scale-del, strategy del, algorithm scale", u, err)
	}
	if lr, p := seen(); len(lr) != 1 || lr[0] != 0.25 || len(p) != 1 || p[0] != 2 {
		t.Errorf("--lr 0.25 --scale-power 2: the algorithm saw rates %v, powers %v", lr, p)
	}

	cfg := filepath.Join(dir, "exp.yaml")
	yaml := "model: testdata/resnet_small_train.onnx\ndata: testdata/fashion\ntrain: {epochs: 1, lr: 0.05}\n" +
		"forget_sets: [{name: demo, kind: file, ids: testdata/demo/forget_nonIID.txt}]\nseeds: [0]\nno_mia: true\nthreads: 2\nout: " +
		filepath.Join(dir, "exp") + "\nmethods: [{name: Scale, method: scale-del, budgets: [0.05], lr: 0.125, settings: {scale_power: 3}}]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runInProcess(t, "experiment", "--config", cfg); r.code != 0 {
		t.Fatalf("experiment with method scale-del: exit %d: %s", r.code, r.stderr)
	}
	if lr, p := seen(); len(lr) != 1 || lr[0] != 0.125 || len(p) != 1 || p[0] != 3 {
		t.Errorf("lr: 0.125, settings: {scale_power: 3} in the experiment file: the algorithm saw rates %v, powers %v",
			lr, p)
	}
	// Without the setting the algorithm gets its default.
	if r := runInProcess(t, "--model", "testdata/resnet_small_train.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
		"--data", "testdata/fashion", "--method", "scale-del", "--lr", "0.5", "--budget", "0.05", "--no-mia",
		"--no-before", "--out", out, "--overwrite", "--threads", "2"); r.code != 0 {
		t.Fatalf("--method scale-del without --scale-power: exit %d: %s", r.code, r.stderr)
	}
	if _, p := seen(); len(p) != 1 || p[0] != 1 {
		t.Errorf("no --scale-power: the algorithm saw powers %v, want the default 1", p)
	}
	// Another algorithm's setting is refused, naming the flag.
	if r := runInProcess(t, "--model", "testdata/resnet_small_train.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
		"--data", "testdata/fashion", "--method", "del", "--scale-power", "2", "--out", out); r.code == 0 ||
		!strings.Contains(r.stderr, "--scale-power: rft does not read it") {
		t.Errorf("--method del --scale-power 2: exit %d: %s", r.code, r.stderr)
	}
}
