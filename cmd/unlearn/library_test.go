package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// runInProcess runs the command line in this process (so that test-only
// registrations and onnxio's load counter are seen) from the repository
// root, and returns the exit code, stdout and stderr.
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	testutil.RequireORT(t)
	t.Chdir(testutil.RepoRoot(t))
	var so, se bytes.Buffer
	code := runIO(append([]string{"unlearn"}, args...), &so, &se)
	return result{code: code, stdout: so.String(), stderr: se.String()}
}

// TestMainCommandDecodesModelOnce: the main command reads and decodes the
// input model file and the oracle once each (the working copy and the
// audit's reference are made in memory).
func TestMainCommandDecodesModelOnce(t *testing.T) {
	m := filepath.Join(testutil.RepoRoot(t), "testdata", "resnet_small_train.onnx")
	oracle := filepath.Join(testutil.RepoRoot(t), "testdata", "demo", "oracle_resnet_small.onnx")
	before, beforeOracle := onnxio.Loads(m), onnxio.Loads(oracle)
	out := filepath.Join(t.TempDir(), "u.onnx")
	r := runInProcess(t, "--model", m, "--forget", "testdata/demo/forget_nonIID.txt", "--data", "testdata/fashion",
		"--oracle", oracle, "--epochs", "1", "--no-mia", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := onnxio.Loads(m) - before; n != 1 {
		t.Errorf("the model file was decoded %d times, want 1", n)
	}
	if n := onnxio.Loads(oracle) - beforeOracle; n != 1 {
		t.Errorf("the oracle file was decoded %d times, want 1", n)
	}
}

var registerHalve sync.Once

// TestRegisteredAlgorithmRunsThroughMainCommand registers an algorithm from
// this test file alone ("halve": multiply every masked element by ½) and
// runs it through the main command: flags accept it, the mask reaches it,
// the audit checks it and metrics.json reports it.
func TestRegisteredAlgorithmRunsThroughMainCommand(t *testing.T) {
	registerHalve.Do(func() {
		err := unlearn.Register(unlearn.Algorithm{
			Name: "halve", Summary: "test only: halve the masked elements", UsesForget: true,
			Run: func(r *unlearn.Runner) error {
				if err := scaleMasked(r, 0.5); err != nil {
					return err
				}
				r.Note("halved %d tensors", len(r.Input().Mask))
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	dir := t.TempDir()
	out := filepath.Join(dir, "u.onnx")
	r := runInProcess(t, "--model", "testdata/resnet_small_train.onnx", "--forget", "testdata/demo/forget_nonIID.txt",
		"--data", "testdata/fashion", "--algorithm", "halve", "--budget", "0.05", "--no-mia", "--no-before", "--out", out, "--threads", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unlearning struct {
			Algorithm, Strategy, Schedule string
			Audit                         struct {
				BitIdentical  bool  `json:"outside_mask_bit_identical"`
				ChangedParams int64 `json:"changed_params"`
			} `json:"audit"`
			Mask struct {
				Selected int64 `json:"selected"`
			} `json:"mask"`
		} `json:"unlearning"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	u := doc.Unlearning
	if u.Algorithm != "halve" || u.Strategy != "del" || u.Schedule != unlearn.ScheduleFixed {
		t.Errorf("metrics.json: algorithm %q, strategy %q, schedule %q; want halve, del, fixed", u.Algorithm, u.Strategy, u.Schedule)
	}
	// Halving changes every selected element that is not zero; nothing else.
	if !u.Audit.BitIdentical || u.Audit.ChangedParams == 0 || u.Audit.ChangedParams > u.Mask.Selected {
		t.Errorf("audit: bit-identical %v, changed %d, mask selects %d", u.Audit.BitIdentical, u.Audit.ChangedParams, u.Mask.Selected)
	}
}

// TestTypoSuggestsCommand: a mistyped command is a usage error (exit 2)
// that names the nearest command; a word near none keeps the hint about
// flags.
func TestTypoSuggestsCommand(t *testing.T) {
	r := runInProcess(t, "evall")
	if r.code != 2 || !strings.Contains(r.stderr, "unexpected arguments [evall] (did you mean `unlearn eval`?)") {
		t.Errorf("exit %d, stderr %q: want 2 and a suggestion of eval", r.code, r.stderr)
	}
	r = runInProcess(t, "frobnicate")
	if r.code != 2 || !strings.Contains(r.stderr, "(flags start with --; see `unlearn help`)") ||
		strings.Contains(r.stderr, "did you mean") {
		t.Errorf("exit %d, stderr %q: want 2 and the hint about flags", r.code, r.stderr)
	}
}

// scaleMasked multiplies the masked elements of r's model by f: the work
// of the test-only algorithms registered from outside the library.
func scaleMasked(r *unlearn.Runner, f float32) error {
	in := r.Input()
	for name, el := range in.Mask {
		v := in.Model.Graph.LocalValue(name)
		vals, err := v.Init.Float32s()
		if err != nil {
			return err
		}
		for i := range vals {
			if el[i] {
				vals[i] *= f
			}
		}
		if err := v.Init.SetFloat32s(vals); err != nil {
			return err
		}
	}
	return nil
}
