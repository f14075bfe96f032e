package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/yamlerr"
)

// ErrConfig reports a bad experiment file.
var ErrConfig = errors.New("experiment")

// Config is an experiment file (YAML).
type Config struct {
	// Data is the dataset (--data); empty: the bundled subset.
	Data string `yaml:"data"`
	// Mean and Std normalize every channel after [0,1] scaling, as --mean
	// and --std do: empty, one value for all channels, or one per channel
	// (e.g. mean: [0.5], std: [0.5] for torchvision's Normalize((0.5,),
	// (0.5,))).
	Mean []float32 `yaml:"mean"`
	Std  []float32 `yaml:"std"`
	// Architecture is an ONNX model trained from scratch (fresh PyTorch
	// initialisation) with Train for every seed: the original on the whole
	// training split, the oracle without the forget set. Model instead
	// takes a trained original as is (for every seed, or one per seed when
	// the path holds {seed}); the oracle is then trained from Model's graph
	// with Train, unless the forget set names its own (ForgetSet.Oracle).
	Architecture string `yaml:"architecture"`
	Model        string `yaml:"model"`
	Train        Recipe `yaml:"train"`
	// ForgetSets are built per seed.
	ForgetSets []ForgetSet `yaml:"forget_sets"`
	Seeds      []uint64    `yaml:"seeds"`
	Methods    []Method    `yaml:"methods"`
	// Threads for ONNX Runtime (0: the usable cores within the CPU quota); fixed for determinism.
	Threads int `yaml:"threads"`
	// Out is the folder of the cache, results.jsonl and the report.
	Out string `yaml:"out"`
	// NoMIA skips the attacks (faster; the MIA columns are then empty).
	NoMIA bool `yaml:"no_mia"`
	// Score, when set, audits some rows with the per-example forgetting
	// score (`unlearn score`, docs/SCORE.md) after the grid.
	Score *Score `yaml:"score"`
	// Title heads RESULTS.md; Notes names a hand-written Markdown file
	// (machine, discussion) that RESULTS.md includes verbatim after the
	// table, so the whole file is still generated from results.jsonl.
	// Unlike the other paths, Notes is relative to the experiment file's
	// folder and must stay inside it, without symbolic links, naming a
	// regular file of at most MaxNotesSize bytes; Load replaces it with
	// the path from the current directory.
	Title string `yaml:"title"`
	Notes string `yaml:"notes"`
	// notesDir and notesRel are the experiment file's folder and Notes
	// as written (set by Load).
	notesDir, notesRel string
}

// Score is the grid's per-example audit: on the original and forget set
// of Seed, K oracles trained with the grid's recipe (seeds OracleSeed + k)
// against K runs of each of Methods (seeds Seed + k), on every forget set
// of ForgetSets, as `unlearn score` computes it.
type Score struct {
	K          int      `yaml:"k"`
	Seed       uint64   `yaml:"seed"`
	OracleSeed uint64   `yaml:"oracle_seed"`
	ForgetSets []string `yaml:"forget_sets"`
	Methods    []string `yaml:"methods"`
	// RetainSample and TestSample are the evaluated samples (default
	// 2,000 each; larger than the split: all of it).
	RetainSample int `yaml:"retain_sample"`
	TestSample   int `yaml:"test_sample"`
}

// Recipe is a training recipe (the train command's flags).
type Recipe struct {
	Epochs      int     `yaml:"epochs" json:"epochs"`
	LR          float64 `yaml:"lr" json:"lr"`
	BatchSize   int     `yaml:"batch_size" json:"batch_size"`
	WeightDecay float64 `yaml:"weight_decay" json:"weight_decay"`
	Momentum    float64 `yaml:"momentum" json:"momentum"`
	Schedule    string  `yaml:"schedule" json:"schedule"`
	// Augment is the training augmentation in --augment syntax (pad=N
	// and/or flip: torchvision's RandomCrop(padding=N) and
	// RandomHorizontalFlip), normalized by Load ("" when off, so that the
	// keys of recipes without it are unchanged).
	Augment string `yaml:"augment" json:"augment,omitempty"`
}

// ForgetSet describes how forget ids are drawn for a seed: kind "iid" takes
// Fraction of the whole training split at random; "non-iid" takes Fraction
// of the examples of Classes at random (the paper: half of classes 2 and 5,
// 10 % of CIFAR-10), and with Fraction 1 every example of Classes (the
// removal of whole classes); "file" reads them from IDs, an ids file
// (data.ParseIDs) whose path may hold {seed}, as a script that trained the
// oracles outside the tool wrote them.
//
// Oracle, when set, is that outside oracle: an ONNX model trained without
// the set's ids (its path may hold {seed}), evaluated as it is instead of
// retrained by the tool. A sidecar file beside it (the model's path with
// .json for .onnx) says what it is and what it cost: "onnx_sha256" and
// "data_sha256" (its key; the files are checked against them), "train_s"
// (seconds of its training epochs), "machine" (the CPU as the records name
// it) and "threads". Runs are timed against it only where machine and
// threads are this run's.
//
// Seeds, when set, runs the set on those of the grid's seeds only (a
// forget set whose oracles cost too much for every seed); empty: on all.
// It is not part of any key, so narrowing or widening it keeps every
// record.
type ForgetSet struct {
	Name     string   `yaml:"name" json:"name"`
	Kind     string   `yaml:"kind" json:"kind"`
	Fraction float64  `yaml:"fraction" json:"fraction"`
	Classes  []int    `yaml:"classes" json:"classes,omitempty"`
	IDs      string   `yaml:"ids" json:"ids,omitempty"`
	Oracle   string   `yaml:"oracle" json:"oracle,omitempty"`
	Seeds    []uint64 `yaml:"seeds" json:"-"`
}

// HasSeed reports whether the set is run on seed.
func (f ForgetSet) HasSeed(seed uint64) bool {
	return len(f.Seeds) == 0 || slices.Contains(f.Seeds, seed)
}

// SeedPath is a config path for a seed: each {seed} replaced by its
// number.
func SeedPath(path string, seed uint64) string {
	return strings.ReplaceAll(path, "{seed}", strconv.FormatUint(seed, 10))
}

// checkTemplate refuses braces other than {seed} in a config path, so that
// a mistyped placeholder ({sed}) is not taken for a file name.
func checkTemplate(key, path string) error {
	if rest := strings.ReplaceAll(path, "{seed}", ""); strings.ContainsAny(rest, "{}") {
		return fmt.Errorf("%w: %s %q: the only placeholder is {seed}", ErrConfig, key, path)
	}
	return nil
}

// Method is one row of the table: a --method (or a strategy and an
// algorithm) with its settings, run at each budget.
type Method struct {
	Name      string    `yaml:"name" json:"name"`
	Method    string    `yaml:"method" json:"method,omitempty"`
	Strategy  string    `yaml:"strategy" json:"strategy,omitempty"`
	Algorithm string    `yaml:"algorithm" json:"algorithm,omitempty"`
	Budgets   []float64 `yaml:"budgets" json:"-"`
	Epochs    int       `yaml:"epochs" json:"epochs,omitempty"`
	LR        float64   `yaml:"lr" json:"lr,omitempty"`
	// Schedule "auto" runs with the auto schedule (--schedule auto; epochs
	// and lr, when given, are then the cap and a fixed rate; MaxEpochs is
	// --max-epochs). Empty or "fixed": the recipe as given, trained on the
	// whole retain set (--proxies=false), as the paper's recipes are.
	Schedule  string `yaml:"schedule" json:"schedule,omitempty"`
	MaxEpochs int    `yaml:"max_epochs" json:"max_epochs,omitempty"`
	// EpochFraction trains each auto round over that fraction of the
	// retain set (--epoch-fraction); a default row may set it too (the
	// default with more frequent checks).
	EpochFraction float64 `yaml:"epoch_fraction" json:"epoch_fraction,omitempty"`
	// UtilityTolerance is the auto schedule's utility tolerance
	// (--utility-tolerance: a fraction, 0.01 = 1 point; 0: the rule's). A
	// default row may set it too: the default with another tolerance, a
	// trial of a rule change run beside the Default row under its own key.
	UtilityTolerance float64 `yaml:"utility_tolerance" json:"utility_tolerance,omitempty"`
	// ForgetTolerance is the auto schedule's forget tolerance
	// (--forget-tolerance, a fraction; 0: the rule's, which widens to two
	// standard errors of the forget set). A default row may set it too.
	ForgetTolerance float64 `yaml:"forget_tolerance" json:"forget_tolerance,omitempty"`
	// PlateauCuts is the auto schedule's plateau cuts (--plateau-cuts; 0:
	// none). A default row may set it too.
	PlateauCuts int `yaml:"plateau_cuts" json:"plateau_cuts,omitempty"`
	// Augment augments the row's unlearning batches (--augment syntax,
	// normalized by Load; the algorithm must augment, see
	// unlearn.Algorithm.Augments). It is not inherited from train.
	Augment string `yaml:"augment" json:"augment,omitempty"`
	// BatchSize is the unlearning's batch (--batch-size) [128, the main
	// command's]; for retrain, the training's batch, so that a retraining
	// row can take the recipe of an original trained outside the tool.
	BatchSize int `yaml:"batch_size" json:"batch_size,omitempty"`
	// DepthFloor keeps del's localization away from the first layers
	// (--depth-floor; localize.Options.DepthFloor). A default row takes
	// the recommended default's.
	DepthFloor float64 `yaml:"depth_floor" json:"depth_floor,omitempty"`
	// Args were more flags for the main command when the runner ran it as
	// a subprocess. The runner now calls the library and refuses a row with
	// args (experiment/runner.Choose); the field stays so that the keys of
	// rows without args (it is omitted from their JSON) never change.
	Args []string `yaml:"args" json:"args,omitempty"`
	// Default runs the main command as a user who chooses nothing would:
	// no method, strategy, algorithm, budget, recipe or schedule flags, so
	// the row measures the tool's recommended default (the runner keys it
	// by the default's description, so a changed default runs again).
	Default bool `yaml:"default" json:"default,omitempty"`
	// Widen is the ladder of larger budgets a del row under the auto
	// schedule widens its mask along while its own estimate says the
	// forget set is still remembered (--widen; unlearn.Job.Widen). A
	// default row may set it: the default with widening, run beside the
	// Default row under its own key.
	Widen []float64 `yaml:"widen" json:"widen,omitempty"`
	// WidenFloor, when set, is the depth floor of the wider rungs
	// (--widen-floor; unlearn.Job.WidenFloor); it needs Widen.
	WidenFloor *float64 `yaml:"widen_floor" json:"widen_floor,omitempty"`
	// Settings gives the algorithm's own settings by name
	// (unlearn.Algorithm.Settings: neggrad+'s beta, scrub's scrub-alpha, an
	// algorithm registered from outside's), with hyphens or underscores.
	// The runner keys a row by their canonical form
	// (unlearn.Canonical); a row without them keeps its key.
	Settings map[string]any `yaml:"settings" json:"settings,omitempty"`
}

// Load reads and checks an experiment file (a regular file of at most
// MaxConfigSize bytes); relative paths in it are relative to the current
// directory, except notes (see Config.Notes).
func Load(path string) (*Config, error) {
	b, err := fsread.File(path, "experiment file", MaxConfigSize)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(bytesReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, path, decodeError(b, err))
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Notes != "" {
		c.notesDir, c.notesRel = filepath.Dir(path), c.Notes
		if c.Notes, err = notesPath(c.notesDir, c.notesRel); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return &c, nil
}

// decodeError describes the error of decoding the experiment file b
// without quoting it (issue 64: `--config /etc/shadow` printed every line
// as an unknown key): a file whose top level is no mapping holding a key
// of an experiment file is named as not one; in one that is, each problem
// is named by line and what was expected (yamlerr.Message).
func decodeError(b []byte, err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return yamlerr.Message(err)
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		known := map[string]bool{}
		t := reflect.TypeFor[Config]()
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
				known[k] = true
			}
		}
		m := doc.Content[0].Content
		for i := 0; i+1 < len(m); i += 2 {
			if known[m[i].Value] {
				return yamlerr.Message(err)
			}
		}
	}
	return "not an experiment file: a YAML mapping of its keys (architecture or model, data, train, " +
		"forget_sets, seeds, out, methods) was expected; see docs/EXPERIMENTS.md"
}

func (c *Config) check() error {
	switch {
	case (c.Architecture == "") == (c.Model == ""):
		return fmt.Errorf("%w: give exactly one of architecture (trained from scratch per seed) and model (a trained "+
			"original)", ErrConfig)
	case c.Out == "":
		return fmt.Errorf("%w: out (the cache and results folder) is required", ErrConfig)
	case len(c.Seeds) == 0:
		return fmt.Errorf("%w: seeds: at least one", ErrConfig)
	case len(c.ForgetSets) == 0:
		return fmt.Errorf("%w: forget_sets: at least one", ErrConfig)
	case len(c.Methods) == 0:
		return fmt.Errorf("%w: methods: at least one", ErrConfig)
	case c.Train.Epochs <= 0 || !(c.Train.LR > 0):
		return fmt.Errorf("%w: train: epochs and lr must be positive", ErrConfig)
	case c.Threads < 0 || c.Threads > MaxThreads:
		return fmt.Errorf("%w: threads %d: must be in [0, %d]", ErrConfig, c.Threads, MaxThreads)
	case len(c.Seeds) > MaxSeeds:
		return fmt.Errorf("%w: seeds: %d, at most %d", ErrConfig, len(c.Seeds), MaxSeeds)
	}
	for i, s := range c.Seeds {
		if slices.Contains(c.Seeds[:i], s) {
			return fmt.Errorf("%w: seeds: %d appears twice (each seed is one replicate)", ErrConfig, s)
		}
	}
	for _, k := range []struct {
		name string
		v    []float32
	}{{"mean", c.Mean}, {"std", c.Std}} {
		for _, x := range k.v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || k.name == "std" && !(x > 0) {
				return fmt.Errorf("%w: %s %v: every value must be a finite number (std: positive)", ErrConfig, k.name, k.v)
			}
		}
	}
	if err := checkTemplate("model", c.Model); err != nil {
		return err
	}
	if c.Train.BatchSize == 0 {
		c.Train.BatchSize = 128
	}
	if c.Train.Schedule == "" {
		c.Train.Schedule = "cosine"
	}
	if c.Train.Momentum == 0 {
		c.Train.Momentum = 0.9
	}
	if err := c.Train.check(); err != nil {
		return err
	}
	var err error
	if c.Train.Augment, err = normalizeAugment(c.Train.Augment); err != nil {
		return fmt.Errorf("%w: train: %v", ErrConfig, err)
	}
	names := map[string]bool{}
	for i, f := range c.ForgetSets {
		if f.Name == "" || names["f:"+f.Name] {
			return fmt.Errorf("%w: forget_sets[%d]: a unique name is required", ErrConfig, i)
		}
		if err := checkForgetSetName(i, f.Name); err != nil {
			return err
		}
		names["f:"+f.Name] = true
		for j, seed := range f.Seeds {
			switch {
			case !slices.Contains(c.Seeds, seed):
				return fmt.Errorf("%w: forget set %s: seeds: %d is not one of the grid's seeds %v", ErrConfig, f.Name, seed,
					c.Seeds)
			case slices.Contains(f.Seeds[:j], seed):
				return fmt.Errorf("%w: forget set %s: seeds: %d appears twice", ErrConfig, f.Name, seed)
			}
		}
		if f.Oracle != "" && c.Model == "" {
			return fmt.Errorf("%w: forget set %s: oracle needs model (the original it was trained beside); with architecture "+
				"the tool trains both", ErrConfig, f.Name)
		}
		if err := checkTemplate("forget set "+f.Name+": oracle", f.Oracle); err != nil {
			return err
		}
		if (f.Kind == "file") != (f.IDs != "") {
			return fmt.Errorf("%w: forget set %s: ids (an ids file) goes with kind file, and only with it", ErrConfig, f.Name)
		}
		switch f.Kind {
		case "file":
			if f.Fraction != 0 || len(f.Classes) > 0 {
				return fmt.Errorf("%w: forget set %s: kind file takes its ids from %s; drop fraction and classes", ErrConfig,
					f.Name, f.IDs)
			}
			if err := checkTemplate("forget set "+f.Name+": ids", f.IDs); err != nil {
				return err
			}
		case "iid":
			if !(f.Fraction > 0 && f.Fraction < 1) {
				return fmt.Errorf("%w: forget set %s: fraction %g outside (0, 1)", ErrConfig, f.Name, f.Fraction)
			}
		case "non-iid":
			// Fraction 1 removes whole classes (every example of them).
			if !(f.Fraction > 0 && f.Fraction <= 1) {
				return fmt.Errorf("%w: forget set %s: fraction %g outside (0, 1]", ErrConfig, f.Name, f.Fraction)
			}
			if len(f.Classes) == 0 {
				return fmt.Errorf("%w: forget set %s: non-iid needs classes", ErrConfig, f.Name)
			}
		default:
			return fmt.Errorf("%w: forget set %s: kind %q (want iid, non-iid or file)", ErrConfig, f.Name, f.Kind)
		}
	}
	for i, m := range c.Methods {
		if m.Name == "" || names["m:"+m.Name] {
			return fmt.Errorf("%w: methods[%d]: a unique name is required", ErrConfig, i)
		}
		if err := checkMethodName(i, m.Name); err != nil {
			return err
		}
		names["m:"+m.Name] = true
		if c.Methods[i].Augment, err = normalizeAugment(m.Augment); err != nil {
			return fmt.Errorf("%w: method %s: %v", ErrConfig, m.Name, err)
		}
		if !(m.EpochFraction >= 0 && m.EpochFraction <= 1) {
			return fmt.Errorf("%w: method %s: epoch_fraction %g outside (0, 1]", ErrConfig, m.Name, m.EpochFraction)
		}
		if m.PlateauCuts < 0 { // the upper bound is the library's (unlearn.Configure)
			return fmt.Errorf("%w: method %s: plateau_cuts %d: must be ≥ 0", ErrConfig, m.Name, m.PlateauCuts)
		}
		if !(m.ForgetTolerance >= 0 && m.ForgetTolerance < 1) {
			return fmt.Errorf("%w: method %s: forget_tolerance %g outside [0, 1) (a fraction: 0.01 "+
				"= 1 point)", ErrConfig, m.Name, m.ForgetTolerance)
		}
		if !(m.UtilityTolerance >= 0 && m.UtilityTolerance < 1) {
			return fmt.Errorf("%w: method %s: utility_tolerance %g outside [0, 1) (a fraction: 0.01 = 1 point)", ErrConfig,
				m.Name, m.UtilityTolerance)
		}
		if !(m.DepthFloor >= 0 && m.DepthFloor < 1) {
			return fmt.Errorf("%w: method %s: depth_floor %g outside [0, 1)", ErrConfig, m.Name, m.DepthFloor)
		}
		if m.BatchSize < 0 || m.BatchSize > MaxBatchSize {
			return fmt.Errorf("%w: method %s: batch_size %d: must be in [1, %d]", ErrConfig, m.Name, m.BatchSize, MaxBatchSize)
		}
		if f := m.WidenFloor; f != nil && (len(m.Widen) == 0 || !(*f >= 0 && *f < 1)) {
			return fmt.Errorf("%w: method %s: widen_floor %g: the depth floor of the widen rungs, in [0, 1), "+
				"with widen", ErrConfig, m.Name, *f)
		}
		for i, b := range m.Widen {
			if !(b > 0 && b <= 1) || (i > 0 && b <= m.Widen[i-1]) {
				return fmt.Errorf("%w: method %s: widen %v: budgets in (0, 1], each larger than the "+
					"one before", ErrConfig, m.Name, m.Widen)
			}
		}
		if m.Default {
			if m.Method != "" || m.Strategy != "" || m.Algorithm != "" || len(m.Budgets) > 0 || m.Epochs != 0 ||
				m.LR != 0 || m.Schedule != "" || m.MaxEpochs != 0 || m.BatchSize != 0 || m.DepthFloor != 0 || m.Augment != "" ||
				len(m.Args) > 0 {
				return fmt.Errorf("%w: method %s: default runs the main command without choices; "+
					"drop method, strategy, algorithm, budgets, epochs, lr, schedule, max_epochs, "+
					"batch_size, depth_floor, augment and args (it takes epoch_fraction, "+
					"utility_tolerance, forget_tolerance, plateau_cuts, widen and widen_floor only)", ErrConfig, m.Name)
			}
			continue
		}
		if m.Method == "" && m.Algorithm == "" {
			return fmt.Errorf("%w: method %s: give method or algorithm", ErrConfig, m.Name)
		}
		for _, b := range m.Budgets {
			if !(b > 0 && b <= 1) {
				return fmt.Errorf("%w: method %s: budget %g outside (0, 1]", ErrConfig, m.Name, b)
			}
		}
		if m.Epochs < 0 || m.LR < 0 || m.MaxEpochs < 0 {
			return fmt.Errorf("%w: method %s: epochs, max_epochs and lr must be ≥ 0", ErrConfig, m.Name)
		}
		if m.Epochs > MaxEpochs || m.MaxEpochs > MaxEpochs {
			return fmt.Errorf("%w: method %s: epochs %d, max_epochs %d: at most %d", ErrConfig, m.Name, m.Epochs, m.MaxEpochs,
				MaxEpochs)
		}
		if math.IsInf(m.LR, 0) || math.IsNaN(m.LR) {
			return fmt.Errorf("%w: method %s: lr %g: must be a finite number", ErrConfig, m.Name, m.LR)
		}
		switch m.Schedule {
		case "", "fixed":
			if m.MaxEpochs > 0 {
				return fmt.Errorf("%w: method %s: max_epochs applies to schedule auto", ErrConfig, m.Name)
			}
		case "auto":
		default:
			return fmt.Errorf("%w: method %s: schedule %q (want fixed or auto)", ErrConfig, m.Name, m.Schedule)
		}
		if m.EpochFraction != 0 && m.Schedule != "auto" {
			return fmt.Errorf("%w: method %s: epoch_fraction applies to schedule auto", ErrConfig, m.Name)
		}
		if m.ForgetTolerance != 0 && m.Schedule != "auto" {
			return fmt.Errorf("%w: method %s: forget_tolerance applies to schedule auto (the "+
				"stopping rule's)", ErrConfig, m.Name)
		}
		if len(m.Widen) > 0 && m.Schedule != "auto" {
			return fmt.Errorf("%w: method %s: widen applies to schedule auto (it acts when the "+
				"stopping rule stalls)", ErrConfig, m.Name)
		}
		if m.UtilityTolerance != 0 && m.Schedule != "auto" {
			return fmt.Errorf("%w: method %s: utility_tolerance applies to schedule auto (the stopping rule's)", ErrConfig,
				m.Name)
		}
		if m.PlateauCuts != 0 && m.Schedule != "auto" {
			return fmt.Errorf("%w: method %s: plateau_cuts applies to schedule auto (the stopping rule's)", ErrConfig,
				m.Name)
		}
	}
	return c.Score.check(c, names)
}

func (s *Score) check(c *Config, names map[string]bool) error {
	if s == nil {
		return nil
	}
	switch {
	case s.K < 2:
		return fmt.Errorf("%w: score: k %d: need at least 2 models per side (16 to rank clearly different methods)",
			ErrConfig, s.K)
	case s.K > MaxScoreK:
		return fmt.Errorf("%w: score: k %d: at most %d models per side", ErrConfig, s.K, MaxScoreK)
	case len(s.ForgetSets) == 0 || len(s.Methods) == 0:
		return fmt.Errorf("%w: score: name at least one forget set and one method", ErrConfig)
	case !slices.Contains(c.Seeds, s.Seed):
		return fmt.Errorf("%w: score: seed %d is not one of the grid's seeds %v (its original and forget set are audited)",
			ErrConfig, s.Seed, c.Seeds)
	case s.RetainSample < 0 || s.TestSample < 0:
		return fmt.Errorf("%w: score: retain_sample and test_sample must be ≥ 0", ErrConfig)
	}
	if s.RetainSample == 0 {
		s.RetainSample = 2000
	}
	if s.TestSample == 0 {
		s.TestSample = 2000
	}
	for _, f := range s.ForgetSets {
		if !names["f:"+f] {
			return fmt.Errorf("%w: score: forget set %q is not in forget_sets", ErrConfig, f)
		}
		i := slices.IndexFunc(c.ForgetSets, func(fs ForgetSet) bool { return fs.Name == f })
		if !c.ForgetSets[i].HasSeed(s.Seed) {
			return fmt.Errorf("%w: score: forget set %s is not run on seed %d (its seeds are %v)", ErrConfig, f, s.Seed,
				c.ForgetSets[i].Seeds)
		}
	}
	for _, m := range s.Methods {
		if !names["m:"+m] {
			return fmt.Errorf("%w: score: method %q is not in methods", ErrConfig, m)
		}
	}
	for _, m := range c.Methods {
		if slices.Contains(s.Methods, m.Name) && len(m.Budgets) > 1 {
			return fmt.Errorf("%w: score: method %s has %d budgets; a scored row needs one", ErrConfig, m.Name, len(m.Budgets))
		}
	}
	return nil
}

// Bounds of an experiment file's counts, checked by Load before any work.
const (
	// MaxBatchSize bounds train.batch_size and a method's batch_size.
	MaxBatchSize = 1 << 16
	// MaxEpochs bounds train.epochs and a method's epochs and max_epochs.
	MaxEpochs = 10000
	// MaxSeeds bounds the seeds.
	MaxSeeds = 1000
	// MaxThreads bounds threads.
	MaxThreads = 1024
	// MaxScoreK bounds score.k; it equals unlearn/scoring.MaxK (this
	// package stays free of the runtime's packages).
	MaxScoreK = 4096
)

// check refuses a recipe no training can run with: epochs in
// [1, MaxEpochs], a finite positive lr, batch_size in [1, MaxBatchSize],
// a finite weight_decay ≥ 0, momentum in [0, 1), a known schedule
// (unlearn.TrainCosine or unlearn.TrainConstant). It
// runs after the defaults are filled in.
func (t Recipe) check() error {
	switch {
	case t.Epochs < 1 || t.Epochs > MaxEpochs:
		return fmt.Errorf("%w: train: epochs %d: must be in [1, %d]", ErrConfig, t.Epochs, MaxEpochs)
	case !(t.LR > 0) || math.IsInf(t.LR, 0):
		return fmt.Errorf("%w: train: lr %g: must be a finite positive number", ErrConfig, t.LR)
	case t.BatchSize < 1 || t.BatchSize > MaxBatchSize:
		return fmt.Errorf("%w: train: batch_size %d: must be in [1, %d]", ErrConfig, t.BatchSize, MaxBatchSize)
	case !(t.WeightDecay >= 0) || math.IsInf(t.WeightDecay, 0):
		return fmt.Errorf("%w: train: weight_decay %g: must be a finite number ≥ 0", ErrConfig, t.WeightDecay)
	case !(t.Momentum >= 0 && t.Momentum < 1):
		return fmt.Errorf("%w: train: momentum %g: must be in [0, 1)", ErrConfig, t.Momentum)
	case t.Schedule != "cosine" && t.Schedule != "constant":
		return fmt.Errorf("%w: train: schedule %q: must be cosine or constant", ErrConfig, t.Schedule)
	}
	return nil
}

// normalizeAugment checks an augment value and writes it as
// data.Augment.String() does ("" when off), so that one augmentation has
// one key however it is written.
func normalizeAugment(s string) (string, error) {
	a, err := data.ParseAugment(s)
	if err != nil || !a.On() {
		return "", err
	}
	return a.String(), nil
}

// ForgetIDs draws the forget set's ids for a seed from the training labels
// (sorted ascending). The draw depends only on the set, the seed and the
// labels.
func ForgetIDs(f ForgetSet, seed uint64, labels []int) ([]int, error) {
	rng := rand.New(rand.NewPCG(seed, 0x666f72676574)) // "forget"
	var pool []int
	switch f.Kind {
	case "iid":
		pool = make([]int, len(labels))
		for i := range pool {
			pool[i] = i
		}
	case "non-iid":
		for i, y := range labels {
			if slices.Contains(f.Classes, y) {
				pool = append(pool, i)
			}
		}
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrConfig, f.Kind)
	}
	n := int(f.Fraction*float64(len(pool)) + 0.5)
	if n == 0 {
		return nil, fmt.Errorf("%w: forget set %s is empty for these data (classes %v)", ErrConfig, f.Name, f.Classes)
	}
	perm := rng.Perm(len(pool))[:n]
	ids := make([]int, n)
	for i, k := range perm {
		ids[i] = pool[k]
	}
	sort.Ints(ids)
	return ids, nil
}

// Key is a cache key: the SHA-256 of the JSON of parts, shortened.
func Key(parts ...any) string {
	b, _ := json.Marshal(parts)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
