package unlearn

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// offHashes are the SHA-256 of every float initializer (sorted by name,
// name then little-endian bits) after short runs on the bundled model,
// taken at commit 0d36654, before training augmentation existed. With
// augmentation off the training steps must be unchanged bit for bit.
// ONNX Runtime's kernels differ between CPUs, so the comparison runs only
// with UNLEARN_PIN_HASHES=1, on the machine the hashes were taken on
// (x86-64, the repository's .ort ONNX Runtime, 2 threads); elsewhere the
// test logs the hashes.
var offHashes = map[string]string{
	"rft":          "ecb6ddd6e13dd296c2640ffd9341ccb943767d2070a3124a26ae8f873960d338",
	"finetune":     "8022d604bd709212889cd1e10a25d6221306faec7c2990ddebef64460e76c372",
	"l1-sparse":    "3d6576ed978f4a31e5f02cf84e2568e9e89621fc2f58740d4fb6988623e11716",
	"neggrad":      "f4d1a17eacb896a1d5b62ba625e2c1cf41eb91a5c0a844975948cc3f49bbf01a",
	"neggrad+":     "1ddc77c90c696835b0a0f1cf9fd928bdeeee8097280e1b6abb0565c435db63b4",
	"random-label": "e13d0fe38a185547c5897cafd72b7bba6104627ee7aaaf36b7beda67b3d6ab15",
	"scrub":        "b83b11ccd1539089c1688e27b22ff6ce43b7c22e303f46b430fa031c0193b1fb",
	"retrain":      "b58417c5f127935c9dec46137c53e9b82745004d5ec7bb5be75b3620d932a5ea",
}

func hashInits(t testing.TB, vals map[string][]float32) string {
	t.Helper()
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	var b [4]byte
	for _, n := range names {
		h.Write([]byte(n))
		for _, v := range vals[n] {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestAugmentOffUnchanged runs every training algorithm and Retrain for one
// short epoch without augmentation and compares the result's hash with the
// one taken before augmentation was added.
func TestAugmentOffUnchanged(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	forget, retain := every(d.forget, 4), every(d.retain, 16)
	got := map[string]string{}
	for _, algo := range []string{"rft", "finetune", "l1-sparse", "neggrad", "neggrad+", "random-label", "scrub"} {
		m := loadModel(t, "resnet_small_train.onnx")
		cfg := quick(algo)
		cfg.Seed, cfg.Momentum, cfg.WeightDecay, cfg.BatchSize = 7, 0.9, 5e-4, 64
		if _, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: randomMask(t, m, 0.5, 3)}, cfg); err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		got[algo] = hashInits(t, initValues(t, m))
	}
	keep := map[int]bool{}
	for _, i := range every(d.retain, 14) {
		keep[i] = true
	}
	var exclude []int
	for i := range d.ds.Train.Len() {
		if !keep[i] {
			exclude = append(exclude, i)
		}
	}
	out := filepath.Join(t.TempDir(), "r.onnx")
	job := RetrainJob{ModelPath: testutil.Testdata(t, "resnet_small_train.onnx"), Data: d.ds, Exclude: exclude, FromScratch: true,
		Epochs: 1, LR: 0.05, BatchSize: 64, Momentum: 0.9, WeightDecay: 5e-4, Seed: 3, Runtime: testRuntime, Out: out}
	if _, err := Retrain(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	rm, err := onnxio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	got["retrain"] = hashInits(t, initValues(t, rm))
	pin := os.Getenv("UNLEARN_PIN_HASHES") == "1"
	for name, h := range got {
		t.Logf("%q: %q,", name, h)
		if pin && offHashes[name] != h {
			t.Errorf("%s: hash %s, before augmentation %s", name, h, offHashes[name])
		}
	}
}
