package scoring

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/unlearn-tool/unlearn/unlearn"
)

// pinnedSpecs are runs whose recorded algorithm settings (settings.json's
// setup.method.config) TestConfigEncodingPinned pins: the default, every
// built-in method (the built-in algorithms' settings are recorded whichever
// runs), fixed and auto recipes, the auto schedule's own
// settings, explicit zeros, augmentation, grad channels and retrain's
// train schedules.
func pinnedSpecs() map[string]unlearn.Spec {
	base := unlearn.Spec{ModelPath: "m.onnx", ForgetPath: "f.txt", BatchSize: 128}
	with := func(f func(*unlearn.Spec)) unlearn.Spec {
		s := base
		f(&s)
		return s
	}
	out := map[string]unlearn.Spec{"default": base}
	for _, m := range []string{"del", "salun", "shallowest-rft", "critmem-rl", "retrain-free", "finetune", "neggrad",
		"neggrad+", "random-label", "l1-sparse", "scrub", "ssd", "iu", "retrain"} {
		out["method "+m] = with(func(s *unlearn.Spec) { s.Method = unlearn.Some(m) })
	}
	out["finetune fixed"] = with(func(s *unlearn.Spec) {
		s.Method, s.Recipe.Epochs, s.Recipe.LR = unlearn.Some("finetune"), unlearn.Some(3), unlearn.Some(0.05)
	})
	out["neggrad+ momentum 0 decay 0"] = with(func(s *unlearn.Spec) {
		s.Method, s.Recipe.Momentum, s.Recipe.WeightDecay = unlearn.Some("neggrad+"), unlearn.Some(0.0), unlearn.Some(0.0)
	})
	out["del auto settings"] = with(func(s *unlearn.Spec) {
		s.Method, s.Recipe.MaxEpochs, s.Recipe.EpochFraction = unlearn.Some("del"), unlearn.Some(4), unlearn.Some(0.5)
		s.Recipe.ForgetTolerance, s.Recipe.UtilityTolerance = unlearn.Some(0.02), unlearn.Some(0.0)
	})
	out["salun augment seed"] = with(func(s *unlearn.Spec) {
		s.Method, s.Augment, s.Seed, s.BatchSize, s.NoMIA = unlearn.Some("salun"), "pad=4,flip", 5, 64, true
	})
	out["rft grad channels no proxies"] = with(func(s *unlearn.Spec) {
		s.Algorithm, s.Recipe.GradChannels, s.Recipe.NoProxies = "rft", true, true
	})
	out["retrain constant"] = with(func(s *unlearn.Spec) {
		s.Method, s.Recipe.Schedule, s.Recipe.Epochs = unlearn.Some("retrain"), unlearn.TrainConstant, unlearn.Some(2)
	})
	out["scrub weight decay"] = with(func(s *unlearn.Spec) {
		s.Method, s.Recipe.WeightDecay, s.Recipe.LR = unlearn.Some("scrub"), unlearn.Some(1e-3), unlearn.Some(1e-4)
	})
	return out
}

// recordedConfig is the config of settings.json for s, as a reader of the
// file gets it and as its digest hashes it.
func recordedConfig(t *testing.T, s unlearn.Spec) string {
	t.Helper()
	j, err := s.Job()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(j.Config.Record())
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(back); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigEncodingPinned pins the algorithm settings that settings.json
// records (and its digest hashes) for a set of runs: an existing audit
// folder is resumed only when this run's settings equal the folder's, so
// a change to the encoding (a key renamed, added or dropped, a value
// written otherwise) would refuse every existing audit.
func TestConfigEncodingPinned(t *testing.T) {
	const wantDefault = `{"Augment":{"CropPad":0,"Flip":false},"Auto":{"EpochFraction":0,"ForgetBaseline":"","ForgetTolerance` +
		`":0,"LRs":null,"MaxEpochs":0,"MinEpochs":0,"MinProgress":0,"NoAnneal":false,"Patience":0,"RangeSlack` +
		`":0,"RangeSteps":0,"RoundBudget":0,"ScaleForgetTolerance":false,"SplitAllowance":0,"UtilityBaseline"` +
		`:"","UtilityTolerance":0},"BatchSize":128,"Beta":0.99,"Dropout":false,"Epochs":0,"GradChannels":fals` +
		`e,"IU":{"Alpha":0.0003,"Damping":1000,"Samples":0},"L1":0.00007,"LR":0,"Momentum":0.9,"Proxies":{"Fe` +
		`ature":"","HoldoutFraction":0,"HoldoutMax":0,"HoldoutMin":0,"IIDAlpha":0,"NoMIA":false,"Track":true}` +
		`,"SCRUB":{"Alpha":0.001,"ForgetBatchSize":32,"Gamma":0.99,"MaxSteps":1,"Temperature":4},"SSD":{"Alph` +
		`a":100,"Lambda":1},"Schedule":"auto","TrainSchedule":"","WeightDecay":0,"WrongLabels":false}`
	want := map[string]string{
		"default":                      "811d9d426b42dc13",
		"del auto settings":            "c34ccc324d76cd13",
		"finetune fixed":               "e80d4a414d0e2b47",
		"method critmem-rl":            "811d9d426b42dc13",
		"method del":                   "811d9d426b42dc13",
		"method finetune":              "811d9d426b42dc13",
		"method iu":                    "2e0a559984d5f81f",
		"method l1-sparse":             "811d9d426b42dc13",
		"method neggrad":               "811d9d426b42dc13",
		"method neggrad+":              "811d9d426b42dc13",
		"method random-label":          "811d9d426b42dc13",
		"method retrain":               "4a54164479edf4dd",
		"method retrain-free":          "811d9d426b42dc13",
		"method salun":                 "811d9d426b42dc13",
		"method scrub":                 "2e452f8fa909362f",
		"method shallowest-rft":        "811d9d426b42dc13",
		"method ssd":                   "2e0a559984d5f81f",
		"neggrad+ momentum 0 decay 0":  "934e765208aa0454",
		"retrain constant":             "bc33c7dee3f7d0c7",
		"rft grad channels no proxies": "c41c98125c2a0400",
		"salun augment seed":           "b5c6bf37b650c7d0",
		"scrub weight decay":           "dff8da96934de51a",
	}
	specs := pinnedSpecs()
	if len(specs) != len(want) {
		t.Fatalf("%d runs, %d pinned", len(specs), len(want))
	}
	for name, s := range specs {
		got := recordedConfig(t, s)
		if name == "default" && got != wantDefault {
			t.Errorf("default run: settings.json's config\n%s\nwant\n%s", got, wantDefault)
		}
		sum := sha256.Sum256([]byte(got))
		if h := hex.EncodeToString(sum[:8]); want[name] != h {
			t.Errorf("%s: config %s hashes to %s, want %s", name, got, h, want[name])
		}
	}
}
