package unlearn

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// With Config.Augment on, the algorithms that augment give the same model
// for one seed, another model than without augmentation, and say so in
// their notes; scrub does not augment (its result is the unaugmented one)
// and notes that it does not.
func TestRunAugment(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	forget, retain := every(d.forget, 4), every(d.retain, 16)
	aug := data.Augment{CropPad: 2, Flip: true}
	for _, algo := range []string{"finetune", "neggrad+", "random-label", "scrub"} {
		t.Run(algo, func(t *testing.T) {
			runOnce := func(a data.Augment) (string, []string) {
				m := loadModel(t, "resnet_small_train.onnx")
				cfg := quick(algo)
				cfg.Seed, cfg.BatchSize, cfg.Augment = 5, 64, a
				res, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: randomMask(t, m, 0.5, 3)}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				return hashInits(t, initValues(t, m)), render(res.Notes, setting.Plain)
			}
			on1, notes := runOnce(aug)
			on2, _ := runOnce(aug)
			off, offNotes := runOnce(data.Augment{})
			if on1 != on2 {
				t.Error("two augmented runs with one seed differ")
			}
			all := strings.Join(notes, "\n")
			if strings.Contains(strings.Join(offNotes, "\n"), "augmentation") {
				t.Errorf("a run without augmentation mentions it: %q", offNotes)
			}
			if algo == "scrub" {
				if on1 != off {
					t.Error("scrub changed with augmentation, which it does not apply")
				}
				if !strings.Contains(all, "augmentation pad=2,flip not applied") {
					t.Errorf("notes do not say augmentation is not applied: %q", notes)
				}
				return
			}
			if on1 == off {
				t.Error("augmentation changed nothing")
			}
			if !strings.Contains(all, "RandomCrop(size, padding=2), RandomHorizontalFlip()") {
				t.Errorf("notes do not describe the augmentation: %q", notes)
			}
		})
	}
	m := loadModel(t, "resnet_small_train.onnx")
	cfg := quick("finetune")
	cfg.Augment = data.Augment{CropPad: -1}
	if _, err := Run(context.Background(), "finetune", Input{Model: m, Data: d.ds, Forget: forget, Retain: retain}, cfg); err == nil || !strings.Contains(err.Error(), "pad=-1") {
		t.Errorf("a negative padding: %v", err)
	}
}

// Retrain with augmentation: one seed gives one model, not the one
// trained without; an invalid padding is refused before any work.
func TestRetrainAugment(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
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
	dir := t.TempDir()
	var text string
	train := func(name string, a data.Augment) string {
		job := RetrainJob{ModelPath: testutil.Testdata(t, "resnet_small_train.onnx"), Data: d.ds, Exclude: exclude, FromScratch: true,
			Epochs: 1, LR: 0.05, BatchSize: 64, Momentum: 0.9, WeightDecay: 5e-4, Seed: 3, Runtime: testRuntime,
			Out: filepath.Join(dir, name), Augment: a,
			Info: func(event, s string, _ ...any) {
				if event == "train" {
					text = s
				}
			}}
		if _, err := Retrain(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		m, err := onnxio.Load(job.Out)
		if err != nil {
			t.Fatal(err)
		}
		return hashInits(t, initValues(t, m))
	}
	aug := data.Augment{CropPad: 4, Flip: true}
	a := train("a.onnx", aug)
	if !strings.Contains(text, "augmentation RandomCrop(size, padding=4), RandomHorizontalFlip()") {
		t.Errorf("train line %q", text)
	}
	if b := train("b.onnx", aug); a != b {
		t.Error("two augmented retrainings with one seed differ")
	}
	if c := train("c.onnx", data.Augment{}); c == a {
		t.Error("augmentation changed nothing")
	}
	if strings.Contains(text, "augmentation") {
		t.Errorf("train line without augmentation mentions it: %q", text)
	}
	job := RetrainJob{ModelPath: testutil.Testdata(t, "resnet_small_train.onnx"), Data: d.ds, Epochs: 1, LR: 0.05, BatchSize: 64,
		Out: filepath.Join(dir, "d.onnx"), Augment: data.Augment{CropPad: data.MaxCropPad + 1}}
	if _, err := Retrain(context.Background(), job); err == nil || !strings.Contains(err.Error(), "must be in [0, 1024]") {
		t.Errorf("an invalid padding: %v", err)
	}
}
