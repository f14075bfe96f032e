package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// TestPreprocessingMistakesRefused (issue 64, item 11): the four
// preprocessing mistakes of the user trial, made with the bundled demo
// model and the small ViT, are each refused by the main command before any
// work: exit 2, one line naming the accuracy as given and with the fix,
// and the fix in the command line's terms; nothing is written. (--quiet
// leaves out the status line that a model's normalization metadata gets.)
func TestPreprocessingMistakesRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command 8 times")
	}
	root := testutil.RepoRoot(t)
	fashion := filepath.Join(root, "testdata", "fashion")
	ds, err := data.Open(fashion, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mu, sd := float32(testutil.FashionMean), float32(testutil.FashionStd)
	normalized := testutil.FloatNPZ(t, ds, 2000, func(v float32) float32 { return (v - mu) / sd })
	float255 := testutil.FloatNPZ(t, ds, 2000, func(v float32) float32 { return 255 * v })
	folder := testutil.ImageFolder(t, ds, 150, testutil.FashionClasses)
	ids := writeFile(t, "ids.txt", []byte("0\n1\n2\n"))
	for _, name := range []string{"resnet_small_train.onnx", "vit_small.onnx"} {
		raw := filepath.Join(root, "testdata", name)
		for _, c := range []struct {
			name, model, data string
			culprits          []string
		}{
			{"exported without mean/std metadata", testutil.NormalizedInputModel(t, raw, mu, sd, false), fashion,
				[]string{"as given", "with the data's own mean/std", "pass --mean 0.29 --std 0.354", "unlearn.mean/unlearn.std"}},
			{"npz of already-normalized floats", testutil.NormalizedInputModel(t, raw, mu, sd, true), normalized,
				[]string{"as given", "already normalized", "metadata normalizes them again", "in [0, 1]"}},
			{"npz of float pixels in 0-255", raw, float255, []string{"as given", "divided by 255", "(0 to 255)"}},
			{"image folder in another class order", raw, folder,
				[]string{"as given", "class folders", "0_t-shirt, 1_trouser, 2_pullover"}},
		} {
			t.Run(strings.TrimSuffix(name, ".onnx")+"/"+c.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "u.onnx")
				r := runCLI(t, "--model", c.model, "--data", c.data, "--forget", ids, "--out", out,
					"--method", "finetune", "--epochs", "1", "--no-mia", "--threads", "2", "--quiet")
				wantError(t, r, exitUsage, append(c.culprits, "invalid input", "--allow-chance")...)
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a refused run left %s (%v)", out, err)
				}
			})
		}
	}
}

// TestAllowChanceRunsLowModels: --allow-chance still runs a model that
// truly scores low on data preprocessed right (an untrained ViT at about
// 10 %, which is refused without it), and a model whose preprocessing
// check finds a mistake, which it then names in a warning.
func TestAllowChanceRunsLowModels(t *testing.T) {
	if testing.Short() {
		t.Skip("unlearns twice")
	}
	root := testutil.RepoRoot(t)
	ds, err := data.Open(filepath.Join(root, "testdata", "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 400 training and 200 test examples keep the runs short.
	unit := testutil.FloatNPZ(t, ds, 400, func(v float32) float32 { return v })
	float255 := testutil.FloatNPZ(t, ds, 400, func(v float32) float32 { return 255 * v })
	ids := writeFile(t, "ids.txt", []byte("0\n1\n2\n3\n"))
	for _, c := range []struct {
		name, model, data string
		refused           []string // without --allow-chance: exit 1 or 2 naming these
		code              int
		warning           string // with it: a warning line saying this
	}{
		{"untrained ViT", "vit_small_untrained_op13.onnx", unit, []string{"near chance", "--allow-chance"}, exitError, ""},
		{"float pixels in 0-255", "resnet_small_train.onnx", float255, []string{"divided by 255", "--allow-chance"}, exitUsage,
			"warning: the model scores 14.5% on 400 training examples"},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := filepath.Join(root, "testdata", c.model)
			out := filepath.Join(t.TempDir(), "u.onnx")
			args := []string{"--model", model, "--data", c.data, "--forget", ids, "--out", out,
				"--method", "finetune", "--epochs", "1", "--no-mia", "--threads", "2", "--retrain-epochs", "0"}
			wantError(t, runCLI(t, args...), c.code, c.refused...)
			r := runCLI(t, append(args, "--allow-chance")...)
			if r.code != 0 {
				t.Fatalf("with --allow-chance: exit %d: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(out); err != nil {
				t.Errorf("no model written: %v", err)
			}
			if c.warning != "" && !strings.Contains(r.stderr, c.warning) {
				t.Errorf("no %q line: %s", c.warning, r.stderr)
			}
		})
	}
}
