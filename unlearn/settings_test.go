package unlearn

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
)

// fieldsMap is the reference encoding Record must equal for a Config
// without Own: every exported field of Config by its Go name, struct
// fields whole, without the runtime, the seed, callbacks and Own. It is
// how settings.json recorded the settings before the descriptors, so an
// equal map keeps existing audits' keys, and a new Config field that no
// descriptor (nor commonFields) covers makes the two differ.
func fieldsMap(c Config) map[string]any {
	v := reflect.ValueOf(c)
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Type.Kind() == reflect.Func || f.Name == "Runtime" || f.Name == "Seed" || f.Name == "Own" {
			continue
		}
		out[f.Name] = v.Field(i).Interface()
	}
	return out
}

// roundTrip is v's JSON as a reader of the file re-encodes it (objects'
// keys sorted).
func roundTrip(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(back)
	return string(b)
}

// TestRecordCoversConfig: Record, built from commonFields and the
// descriptors, encodes every algorithm's defaults, and configs with every
// kind of field changed, as the reflection over Config's fields does.
func TestRecordCoversConfig(t *testing.T) {
	var cfgs []Config
	for _, a := range Algorithms() {
		cfgs = append(cfgs, Defaults(a))
	}
	c := Defaults("scrub")
	c.Epochs, c.LR, c.Beta, c.WrongLabels, c.Dropout, c.GradChannels = 3, 0.125, 0.5, true, true, true
	c.Augment, c.SCRUB.Gamma, c.SSD.Lambda, c.IU.Samples = data.Augment{CropPad: 4, Flip: true}, 0.7, 2, 9
	c.Schedule, c.TrainSchedule, c.Auto.LRs, c.Proxies.Feature, c.Seed = ScheduleAuto, TrainConstant, []float64{1, 2}, "x", 9
	cfgs = append(cfgs, c)
	for i, c := range cfgs {
		if got, want := roundTrip(t, c.Record()), roundTrip(t, fieldsMap(c)); got != want {
			t.Errorf("config %d: Record\n%s\nwant (Config's fields)\n%s", i, got, want)
		}
	}
}

// withAlgorithm registers a for the test and removes it after.
func withAlgorithm(t *testing.T, a Algorithm) {
	t.Helper()
	if err := Register(a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		delete(registry, a.Name)
		order = slices.DeleteFunc(order, func(n string) bool { return n == a.Name })
	})
}

// TestOutsideSettings: an algorithm registered with a setting of its own
// (no Config field) gets it from Recipe.Settings, as text or a number, reads
// it with SettingOf (its default when unset), and Record writes it under
// Own only for that algorithm's configs, so that registering it changes no
// built-in algorithm's record.
func TestOutsideSettings(t *testing.T) {
	before := roundTrip(t, Defaults("rft").Record())
	withAlgorithm(t, Algorithm{Name: "test-scale", Run: func(*Runner) error { return nil }, Epochs: true,
		Settings: []Setting{{Name: "test-rate", Default: 0.5, Help: "h"}, {Name: "test-steps", Default: 2, Help: "h"}}})
	if after := roundTrip(t, Defaults("rft").Record()); after != before {
		t.Errorf("registering an outside algorithm changed rft's record:\n%s\nwas\n%s", after, before)
	}
	cfg, err := Configure("test-scale", Recipe{Settings: Values{"test_rate": "0.25"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, n := SettingOf[float64](cfg, "test-rate"), SettingOf[int](cfg, "test-steps"); r != 0.25 || n != 2 {
		t.Errorf("SettingOf: rate %v steps %v, want 0.25 (given) and 2 (the default)", r, n)
	}
	rec := roundTrip(t, cfg.Record())
	if !strings.Contains(rec, `"Own":{"test-rate":0.25,"test-steps":2}`) {
		t.Errorf("Record: %s; want Own with test-rate 0.25 and test-steps 2", rec)
	}
	// A float given as an int and as text encode alike.
	other, err := Configure("test-scale", Recipe{Settings: Values{"test-rate": 0.25, "test-steps": 2.0}})
	if err != nil || roundTrip(t, other.Record()) != rec {
		t.Errorf("equal settings given otherwise: %v, %s", err, roundTrip(t, other.Record()))
	}
	bad := cfg
	bad.Own = Values{"beta": 0.5}
	if err := bad.checkOwn(registry["test-scale"]); !errors.Is(err, ErrInput) {
		t.Errorf("Own holding another algorithm's setting: %v", err)
	}
}

// TestConfigureSettings: a built-in algorithm's setting given by name sets
// its Config field; a setting of another algorithm, an unknown one, a value
// that does not parse and a zero that the field would read as its default
// are refused, naming the setting.
func TestConfigureSettings(t *testing.T) {
	cfg, err := Configure("scrub", Recipe{Settings: Values{"scrub-alpha": "0.5", "scrub_max_steps": 2}})
	if err != nil || cfg.SCRUB.Alpha != 0.5 || cfg.SCRUB.MaxSteps != 2 || cfg.SCRUB.Gamma != 0.99 {
		t.Errorf("scrub settings: %+v (%v)", cfg.SCRUB, err)
	}
	if SettingOf[float64](cfg, "scrub-alpha") != 0.5 || SettingOf[float64](cfg, "beta") != 0.99 {
		t.Errorf("SettingOf: scrub-alpha %v, beta %v", SettingOf[float64](cfg, "scrub-alpha"), SettingOf[float64](cfg, "beta"))
	}
	if cfg, err := Configure("random-label", Recipe{Settings: Values{"wrong-labels": "true"}}); err != nil || !cfg.WrongLabels {
		t.Errorf("wrong-labels: %v (%v)", cfg.WrongLabels, err)
	}
	for _, tc := range []struct {
		algo string
		vals Values
		want string
	}{
		{"rft", Values{"beta": 0.5}, "beta: rft does not read it"},
		{"neggrad+", Values{"nope": 1}, "nope: no registered algorithm"},
		{"neggrad+", Values{"beta": "x"}, "beta x: not a number"},
		{"neggrad+", Values{"beta": 0}, "beta 0: must be non-zero"},
		{"scrub", Values{"scrub-max-steps": 1.5}, "scrub-max-steps 1.5: not a whole number"},
		{"scrub", Values{"scrub-alpha": 1, "scrub_alpha": 2}, "scrub-alpha: given twice"},
	} {
		if _, err := Configure(tc.algo, Recipe{Settings: tc.vals}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v; want an error containing %q", tc.algo, tc.vals, err, tc.want)
		}
	}
}

// TestRegisterChecksSettings: a descriptor whose setting has a bad name, a
// name another algorithm's setting has, a default of an unsupported type,
// or a field path that is not a Config field of the default's type is
// refused, and nothing is registered.
func TestRegisterChecksSettings(t *testing.T) {
	run := func(*Runner) error { return nil }
	for _, s := range []Setting{
		{Name: "Bad_Name", Default: 1.0},
		{Name: "beta", Default: 1.0},
		{Name: "x", Default: []int{1}},
		{Name: "x", Field: "Nope", Default: 1.0},
		{Name: "x", Field: "SCRUB.MaxSteps", Default: 1.0},
	} {
		if err := Register(Algorithm{Name: "test-bad", Run: run, Settings: []Setting{s}}); err == nil {
			t.Errorf("setting %+v: registered", s)
		}
	}
	if slices.Contains(Algorithms(), "test-bad") {
		t.Error("a refused algorithm was registered")
	}
	if err := Register(Algorithm{Name: "test-bad", Run: run, Settings: []Setting{{Name: "y", Default: 1}, {Name: "y",
		Default: 2}}}); err == nil {
		t.Error("two settings of one name: registered")
	}
}
