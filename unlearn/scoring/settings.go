package scoring

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// settings describes the job for settings.json, by content.
func (r *state) settings() (schema.ScoreSettings, error) {
	job := &r.job
	s := job.Suite
	di, fi, err := s.Provenance()
	if err != nil {
		return schema.ScoreSettings{}, err
	}
	mi, err := eval.NewModelInfo(job.ModelPath)
	if err != nil {
		return schema.ScoreSettings{}, err
	}
	m, o := job.Method, job.Oracle
	sched := o.Schedule
	if sched == "" {
		sched = unlearn.TrainCosine
	}
	st := schema.ScoreSettings{Schema: schema.ScoreSettingsSchema,
		Setup: schema.ScoreSetup{ModelSHA256: mi.SHA256, DataSHA256: di.SHA256, Mean: di.Mean, Std: di.Std,
			ForgetSHA256: fi.SHA256, Forget: fi.N, K: job.K,
			Method: &schema.ScoreMethod{Method: m.Method, Strategy: m.Strategy, Algorithm: m.Algorithm,
				Budget: m.Budget, DepthFloor: m.DepthFloor,
				Classifier: m.Classifier, Seed: m.Config.Seed, Config: m.Config.Record()},
			Recipe: schema.ScoreRecipe{Epochs: o.Epochs, LR: o.LR, Schedule: sched, Momentum: o.Momentum,
				WeightDecay: o.WeightDecay, BatchSize: o.BatchSize, Seed: o.Seed},
			Samples: schema.ScoreSamples{Retain: len(r.retain), Test: len(r.test), Seed: job.SampleSeed}},
		Paths: schema.ScorePaths{Model: job.ModelPath, Data: di.Path, Forget: fi.Path}}
	if o.Augment.On() {
		st.Setup.Recipe.Augment = o.Augment.String()
	}
	// The JSON round trip makes the settings what a reader of the file
	// gets (the config's numbers as float64), for the comparison.
	var back schema.ScoreSettings
	b, err := json.Marshal(st)
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	return back, err
}

// The files of a results folder, which other processes may write, are
// read as regular files that are not symbolic links, within a size limit
// (fsread.FileNoLink): a link to /dev/zero, a FIFO or a huge sparse file
// is refused with the file named.

// syncSettings writes settings.json when the folder has none and compares
// the folder's with st otherwise (the file is re-read after writing: a
// shard started at the same moment may have written its own first). It
// returns the digest that the task files carry.
func syncSettings(path string, st schema.ScoreSettings) (string, error) {
	d, err := checkSettings(path, st)
	if errors.Is(err, os.ErrNotExist) {
		if err := writeJSON(path, st); err != nil {
			return "", err
		}
		d, err = checkSettings(path, st)
	}
	return d, err
}

// checkSettings compares the settings file at path with st, writing
// nothing, and returns the digest that the task files carry (an
// os.ErrNotExist when there is no file).
func checkSettings(path string, st schema.ScoreSettings) (string, error) {
	b, err := fsread.FileNoLink(path, "settings file", maxSettingsSize)
	if err != nil {
		return "", err
	}
	var have schema.ScoreSettings
	if err := json.Unmarshal(b, &have); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if have.Schema != schema.ScoreSettingsSchema {
		return "", fmt.Errorf("%w: %s has schema %q, want %q", ErrSettings, path, have.Schema, schema.ScoreSettingsSchema)
	}
	if d := Diff(have.Setup, st.Setup); len(d) > 0 {
		if added := NewFields(have.Setup, st.Setup); len(added) == len(d) {
			return "", fmt.Errorf("%w: %s was written by an older version of unlearn: it lacks %s, which this "+
				"version records (%s); "+
				"its tasks were computed without them, so this version does not resume the audit: give another results folder, "+
				"or finish it with the version that started it", ErrSettings, path, strings.Join(added, ", "),
				strings.Join(d, "; "))
		}
		return "", fmt.Errorf("%w: %s records another audit: %s (the folder's first, this run's second); use another "+
			"results folder or the folder's settings",
			ErrSettings, path, strings.Join(d, "; "))
	}
	return digest(have.Setup)
}

// OracleSetup is the part of a setup that the oracles depend on: the
// method and K left out (oracle k depends on k and the recipe's seed only).
func OracleSetup(s schema.ScoreSetup) schema.ScoreSetup {
	s.Method, s.K = nil, 0
	return s
}

func digest(s schema.ScoreSetup) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Diff lists the fields where two setups differ, as "name: a ≠ b" with the
// fields' JSON names (nested ones joined by dots), in a fixed order.
func Diff(a, b schema.ScoreSetup) []string {
	fa, fb := flatten(a), flatten(b)
	var keys []string
	for k := range fa {
		keys = append(keys, k)
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		switch {
		case !oka:
			va = "(none)"
		case !okb:
			vb = "(none)"
		}
		if va != vb {
			out = append(out, fmt.Sprintf("%s: %s ≠ %s", k, va, vb))
		}
	}
	return out
}

// NewFields lists the fields of b that a lacks altogether (by the fields'
// JSON names, nested ones joined by dots, sorted): what a settings file
// written by an older version of the tool does not record.
func NewFields(a, b schema.ScoreSetup) []string {
	fa, fb := flatten(a), flatten(b)
	var out []string
	for k := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// flatten maps v's JSON leaves (arrays whole) by dotted key to their JSON
// text.
func flatten(v any) map[string]string {
	b, _ := json.Marshal(v)
	var tree any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&tree)
	out := map[string]string{}
	var walk func(prefix string, x any)
	walk = func(prefix string, x any) {
		if m, ok := x.(map[string]any); ok {
			for k, v := range m {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, v)
			}
			return
		}
		t, _ := json.Marshal(x)
		out[prefix] = string(t)
	}
	walk("", tree)
	return out
}

// readTask reads a task's result file and checks that it belongs to the
// folder and that every value is in its range (checkTask): os.ErrNotExist
// when there is none, ErrDamaged (with ErrCutShort when it is not JSON)
// when it is damaged.
func (r *state) readTask(t task) (*schema.ScoreTask, error) {
	p := r.taskPath(t)
	b, err := fsread.FileNoLink(p, "task file", r.maxTaskSize())
	if err != nil {
		return nil, err
	}
	var res schema.ScoreTask
	if err := json.Unmarshal(b, &res); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, setting.Textf("%w: %s: %w (%v; a write was interrupted, or a copy is partial); %s",
				ErrDamaged, p, ErrCutShort, err, repairHint)
		}
		return nil, setting.Textf("%w: %s: %v; %s", ErrDamaged, p, err, repairHint)
	}
	switch {
	case res.Schema != schema.ScoreTaskSchema:
		return nil, fmt.Errorf("%w: %s has schema %q, want %q", ErrSettings, p, res.Schema, schema.ScoreTaskSchema)
	case res.Settings != r.digest[t.kind]:
		file := "settings.json"
		if t.kind == schema.ScoreOracle {
			file = "oracles.json"
		}
		return nil, fmt.Errorf("%w: %s was made with other settings than the folder's %s (settings sha256 %.12s…, folder "+
			"%.12s…)", ErrSettings, p, file, res.Settings, r.digest[t.kind])
	case res.Kind != t.kind || res.Index != t.index || res.Seed != t.seed:
		return nil, fmt.Errorf("%w: %s holds %s %d (seed %d), want %s", ErrSettings, p, res.Kind, res.Index, res.Seed,
			t.name())
	}
	if err := checkTask(p, &res, [3]int{r.setup.Forget, len(r.retain), len(r.test)}); err != nil {
		return nil, err
	}
	return &res, nil
}

// maxSettingsSize bounds settings.json and oracles.json.
const maxSettingsSize = 1 << 20

// maxTaskSize bounds a task file: its per-example outputs (a margin and
// two 0/1 values, indented JSON) for the forget set and the two samples,
// at most 128 bytes an example, and 1 MiB for the rest.
func (r *state) maxTaskSize() int64 {
	return 1<<20 + 128*int64(r.setup.Forget+len(r.retain)+len(r.test))
}

// writeJSON writes v indented, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(path, append(b, '\n'))
}
