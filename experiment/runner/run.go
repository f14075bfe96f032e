package runner

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/taskindex"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// Job is one experiment: the config and how to run it.
type Job struct {
	// Config is the experiment file, as experiment.Load returns it.
	Config *experiment.Config
	// ConfigPath names the experiment file in RESULTS.md's reproduce line.
	ConfigPath string
	// DataPath is the dataset when Config.Data is empty (the command's
	// default: the bundled subset).
	DataPath string
	// LibPath is the ONNX Runtime library ("" to find it as onnxrt.Setup
	// does). The runtime is set up when the first step runs, so that a
	// fully cached grid and a report need no library.
	LibPath string
	// Device is the ONNX Runtime device every step runs on: "cpu" (or "")
	// or "cuda". Records name the machine with the device (and the GPU's
	// model where the driver says it), so times are compared only with
	// times taken on the same device.
	Device string
	// Tool names the program in the metrics.json files ("unlearn VERSION").
	Tool string
	// DryRun lists the steps and whether they are cached, and runs nothing.
	DryRun bool
	// ReportOnly rebuilds RESULTS.md and the plots from results.jsonl
	// without running or listing any step.
	ReportOnly bool
	// Shards > 0 runs only the seeds at positions ≡ Shard (mod Shards) in
	// the config's seeds (a seed's original, oracles, runs and score
	// audits stay in one shard), appends to results.shard-<Shard>.jsonl
	// and writes no report; a run without shards (or ReportOnly) reads
	// every shard's file beside results.jsonl.
	Shard, Shards int
	// Step, when set, receives every step's state as the grid goes: what
	// ("oracle iid (seed 0)"), state ("cached", "training", "to run", ...)
	// and the step's cache key ("" for steps without a record: originals
	// and timing runs).
	Step func(what, state, key string)
	// Info, when set, receives warnings (event "warning"): a results
	// file's last line cut short, left out or removed.
	Info func(event, text string, fields ...any)
	// Terms words the settings and commands that RESULTS.md, the step
	// logs and the runs' metrics.json name (the command's: flags); nil
	// names them plainly (setting.Plain).
	Terms setting.Terms
}

// Outcome is what Run did.
type Outcome struct {
	// Keys lists the keys of every oracle and run of the config, in grid
	// order.
	Keys []string
	// Table is the report's Markdown table and ranking (empty for a dry
	// run); ResultsMD is the RESULTS.md written, Plots the plot files
	// beside it.
	Table     string
	ResultsMD string
	Plots     []string
}

// state holds one Run's state.
type state struct {
	job     Job
	cfg     *experiment.Config
	results string
	dryRun  bool
	// silent plans the grid without reporting steps: the report's way to
	// learn the keys of the config's steps.
	silent bool
	// keys holds the keys of every oracle and run of the config (order:
	// keyList), filled by grid: the report shows only their records, so
	// that records of settings the config no longer has (a changed recipe,
	// an older auto rule) never mix into its rows.
	keys    map[string]bool
	keyList []string
	// missing names the forget sets and seeds whose outside oracle has no
	// sidecar yet (not trained), which a report or dry run leaves out.
	missing []string
	// pending lists the runs of a report or dry run that have no record
	// under their key (pendingMarkdown says which and why).
	pending []pendingRun
	// done holds the records already in results.jsonl by key. They are the
	// cache of record: a step whose key has a record is not run again,
	// even where out/runs/ is gone (a fresh clone of a repository that
	// commits results.jsonl but not the models).
	done map[string]experiment.Record
	// machine is machineID() of this machine.
	machine string
	ds      *data.Dataset
	rt      onnxrt.Options
	rtReady bool
	// scoreTargets are the forget sets of the score's seed as the grid
	// drew them; audits the scored rows' folders (scoreAll).
	scoreTargets []scoreTarget
	audits       []scoreAudit
	// warned holds the warnings already given.
	warned map[string]bool
}

// Run runs the experiment: every step of the grid in a fixed order (per
// seed the original, per forget set the oracle, then every method at every
// budget), each skipped when cached, then the report (RESULTS.md, the
// plots) from results.jsonl. Every step runs in this process through the
// library (unlearn.Retrain, eval.Suite, unlearn.Unlearn), with exactly the
// settings of the tool's commands (the batch sizes and attack settings of
// their defaults), and streams its log events as JSON lines into its
// folder (log.jsonl). Cancelling ctx stops the running step, which leaves
// nothing behind; the cached steps stay.
func Run(ctx context.Context, job Job) (*Outcome, error) {
	cfg := job.Config
	if cfg == nil {
		return nil, fmt.Errorf("%w: no config", experiment.ErrConfig)
	}
	device := cmp.Or(job.Device, "cpu")
	_, unsharded := taskindex.Unsharded("experiment", false)
	r := &state{job: job, cfg: cfg, dryRun: job.DryRun, results: filepath.Join(cfg.Out, "results.jsonl"),
		rt: onnxrt.Options{LibPath: job.LibPath, Threads: cfg.Threads, Device: device}}
	switch {
	case job.Shards == 0 && unsharded != nil:
		// In a batch engine's array without shards every task would run
		// the whole grid (taskindex.Unsharded names the variable).
		return nil, fmt.Errorf("%w: %w", experiment.ErrConfig, unsharded)
	case job.ReportOnly && job.DryRun:
		// A report writes RESULTS.md; a dry run writes nothing: the two
		// cannot both hold (a dry run's report used to be written).
		return nil, setting.FlagTextf("%w: %s and %s contradict each other: a report writes RESULTS.md, a dry run "+
			"writes nothing; give one", experiment.ErrConfig, setting.Of("report-only"), setting.Of("dry-run"))
	case device != "cpu" && device != "cuda":
		return nil, fmt.Errorf("%w: device %q: must be cpu or cuda", experiment.ErrConfig, job.Device)
	case job.Shards == 0 && job.Shard != 0:
		return nil, setting.FlagTextf("%w: shard %d (%s) needs the number of shards (%s)", experiment.ErrConfig, job.Shard,
			setting.Of("shard"), setting.Of("shards"))
	case job.Shards < 0:
		return nil, setting.FlagTextf("%w: %s: want 0 (the whole grid) or a number of shards", experiment.ErrConfig,
			setting.Use("shards", job.Shards))
	case job.Shards > 0 && (job.Shard < 0 || job.Shard >= job.Shards):
		return nil, fmt.Errorf("%w: shard %d of %d: the shard must be in [0, %d)", experiment.ErrConfig, job.Shard,
			job.Shards, job.Shards)
	case job.Shards > len(cfg.Seeds) && !job.ReportOnly:
		// Shards hold whole seeds: a shard past the last seed would run
		// nothing and exit 0, as if its share were done.
		return nil, setting.FlagTextf("%w: %s: more shards than seeds (%d > %d in %s; each shard runs whole seeds), "+
			"so %d shards would run nothing; give %s or fewer, run as %s",
			experiment.ErrConfig, setting.Use("shards", job.Shards), job.Shards, len(cfg.Seeds),
			cmp.Or(job.ConfigPath, "the config"), job.Shards-len(cfg.Seeds), setting.Use("shards", len(cfg.Seeds)),
			taskindex.Array(len(cfg.Seeds)))
	}
	if job.Shards > 0 && !job.ReportOnly {
		r.results = filepath.Join(cfg.Out, fmt.Sprintf("results.shard-%d.jsonl", job.Shard))
	}
	if err := r.checkOut(); err != nil {
		return nil, err
	}
	// Every row is checked before the first step, so that a bad row fails
	// at once, not hours into the grid.
	for _, m := range cfg.Methods {
		for _, b := range append([]float64{0}, m.Budgets...)[min(1, len(m.Budgets)):] {
			if _, err := Choose(m, b); err != nil {
				return nil, err
			}
		}
	}
	if job.ReportOnly {
		r.dryRun, r.silent = true, true
		if err := r.grid(ctx); err != nil {
			return nil, fmt.Errorf("listing the config's steps: %w", err)
		}
	} else {
		if !r.dryRun {
			if err := os.MkdirAll(filepath.Join(cfg.Out, "runs"), 0o755); err != nil {
				return nil, err
			}
			// The records file is an output like the step logs: never
			// appended through a link or into a device (checked before
			// the first step, not hours into the grid).
			records := outfile.Output{Setting: "config", Path: r.results, Note: "the experiment's records"}
			if err := outfile.Check([]outfile.Output{records}, nil); err != nil {
				return nil, err
			}
		}
		if err := r.grid(ctx); err != nil {
			return nil, err
		}
		if r.dryRun || job.Shards > 0 {
			return &Outcome{Keys: r.keyList}, nil
		}
	}
	out, err := r.report()
	if err != nil {
		return nil, err
	}
	out.Keys = r.keyList
	return out, nil
}

// checkOut applies the results folders' rules of every command
// (outfile.CheckResultsDir) to out, before any work: not a link, not the
// root of the file system, neither an input nor inside the dataset, and
// no link where the grid writes. A refusal is an error in the experiment
// file (experiment.ErrConfig).
func (r *state) checkOut() error {
	cfg := r.cfg
	dataPath := cfg.Data
	if dataPath == "" {
		dataPath = r.job.DataPath
	}
	ins := []outfile.Input{{Name: "dataset " + dataPath, Path: dataPath, Tree: true},
		{Name: "architecture " + cfg.Architecture, Path: cfg.Architecture}, {Name: "model " + cfg.Model, Path: cfg.Model},
		{Name: "experiment file " + r.job.ConfigPath, Path: r.job.ConfigPath}}
	if err := outfile.CheckResultsDir(r.outOutput(cfg.Out), ins, "runs", "score"); err != nil {
		if errors.Is(err, outfile.ErrCollision) {
			return fmt.Errorf("%w: %w", experiment.ErrConfig, err)
		}
		return err
	}
	return nil
}

// outFlag is how errors about out: name it: "--config exp.yaml, out:
// PATH: ..." (outfile's labels start with "--").
func (r *state) outOutput(path string) outfile.Output {
	label := setting.Msgf("%s", setting.Of("config"))
	if r.job.ConfigPath != "" { // errors read "--config exp.yaml, out: PATH: ..."
		label = setting.Msgf("%s, out:", setting.Use("config", r.job.ConfigPath))
	}
	return outfile.Output{Setting: "config", Label: label, Path: path}
}

// checkOutputs checks files the experiment writes into out (outfile.Check):
// a link, a device, a FIFO or a folder in their place is refused as an
// error about out: (experiment.ErrConfig), not replaced by the rename that
// writes them.
func (r *state) checkOutputs(paths ...string) error {
	outs := make([]outfile.Output, len(paths))
	for i, p := range paths {
		outs[i] = r.outOutput(p)
	}
	if err := outfile.Check(outs, nil); err != nil {
		return fmt.Errorf("%w: %w", experiment.ErrConfig, err)
	}
	return nil
}

// setup loads ONNX Runtime before the first step that runs a model.
func (r *state) setup() error {
	if r.rtReady {
		return nil
	}
	if err := onnxrt.Setup(r.rt); err != nil {
		return err
	}
	r.rtReady = true
	return nil
}

// machineID names this machine's CPU for the records: model name, family
// and model from /proc/cpuinfo and the machine's CPU count, the processors
// it lists ("" where /proc/cpuinfo cannot be read). The count is the
// machine's, not the process's affinity: a timing pinned to one core (as
// the 2-core machine's grids and trainings run, one a core) keeps the
// machine's name. Two runs' seconds compare only under the same name.
func machineID() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	fields := map[string]string{}
	cpus, first := 0, true
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" {
			first = false // the first processor's block ended
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if k = strings.TrimSpace(k); k == "processor" {
			cpus++
		}
		if first {
			fields[k] = strings.TrimSpace(v)
		}
	}
	if cpus == 0 {
		cpus = runtime.NumCPU()
	}
	name := fields["model name"]
	if name == "" {
		name = fields["vendor_id"]
	}
	if name == "" {
		return ""
	}
	id := name
	if fields["cpu family"] != "" {
		id += fmt.Sprintf(" (family %s, model %s)", fields["cpu family"], fields["model"])
	}
	return fmt.Sprintf("%s, %d CPUs", id, cpus)
}

// resetPeakMemory resets the process's peak resident set size (VmHWM) to
// its current size (Linux ≥ 4.0: "5" to /proc/self/clear_refs), so that a
// run's metrics.json reports the peak of that run, not of the steps the
// grid ran before it in this process. Where it cannot, the peak is the
// process's so far (an upper bound).
func resetPeakMemory() {
	if f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0); err == nil {
		f.WriteString("5")
		f.Close()
	}
}

// gpuModel is " (MODEL)" of the first GPU the NVIDIA driver lists in
// /proc/driver/nvidia/gpus/*/information, or "" where it lists none.
func gpuModel() string {
	files, _ := filepath.Glob("/proc/driver/nvidia/gpus/*/information")
	for _, f := range files {
		b, err := fsread.File(f, "GPU information", 1<<16)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Model" && strings.TrimSpace(v) != "" {
				return " (" + strings.TrimSpace(v) + ")"
			}
		}
	}
	return ""
}

// grid runs every step in a fixed order (with dryRun, lists them) and
// fills r.keys.
func (r *state) grid(ctx context.Context) error {
	r.keys = map[string]bool{}
	r.keyList = nil
	r.missing = nil
	r.pending = nil
	r.scoreTargets = nil
	r.done = map[string]experiment.Record{}
	if !r.dryRun {
		// An append cut short (a full disk) left a partial last line: it
		// is cut off before the next append, which would otherwise
		// continue it.
		w, err := experiment.RepairTail(r.results)
		if err != nil {
			return fmt.Errorf("%s: %w", r.results, err)
		}
		if w != "" {
			r.warn(w)
		}
	}
	if set, err := readAll(r.cfg.Out); err == nil {
		for _, w := range set.Warnings {
			r.warn(w)
		}
		for _, rec := range set.Records {
			r.done[rec.Key] = rec
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cfg := r.cfg
	r.machine = machineID()
	if r.rt.Device == "cuda" && r.machine != "" {
		r.machine += ", cuda" + gpuModel()
	}
	dataPath := cfg.Data
	if dataPath == "" {
		dataPath = r.job.DataPath
	}
	if dataPath == "" {
		return fmt.Errorf("%w: no data: the config names none and the job has no default", experiment.ErrConfig)
	}
	// A report of forget sets that all name their ids files and outside
	// oracles needs neither the data nor the models: their keys come from
	// the oracles' sidecars (a fresh clone rebuilds RESULTS.md without them).
	outsideOnly := true
	for _, fs := range cfg.ForgetSets {
		outsideOnly = outsideOnly && fs.Kind == "file" && fs.Oracle != ""
	}
	var labels []int
	var dataSum, rawDataSum string
	nTrain := math.MaxInt32 // the split's size, for the ids files' range check
	if !(r.job.ReportOnly && outsideOnly) {
		ds, err := data.Open(dataPath, data.Options{Mean: cfg.Mean, Std: cfg.Std})
		if err != nil {
			return err
		}
		r.ds = ds
		labels = ds.Train.Labels(nil)
		nTrain = len(labels)
		if rawDataSum, err = fsread.HashTree(ctx, ds.Path); err != nil {
			if ctx.Err() != nil {
				return unlearn.ErrInterrupted
			}
			return err
		}
		dataSum = rawDataSum
		if len(cfg.Mean)+len(cfg.Std) > 0 {
			// Normalized data train other models: their cache keys differ
			// (unnormalized runs keep the keys they had).
			dataSum += fmt.Sprintf("+mean%v+std%v", cfg.Mean, cfg.Std)
		}
	}
	for i, seed := range cfg.Seeds {
		// A signal stops every phase, a dry run's listing and a report's
		// included (their steps run nothing that would look at ctx).
		if ctx.Err() != nil {
			return unlearn.ErrInterrupted
		}
		if r.job.Shards > 0 && !r.job.ReportOnly && i%r.job.Shards != r.job.Shard {
			continue // another shard's seed
		}
		if !slices.ContainsFunc(cfg.ForgetSets, func(fs experiment.ForgetSet) bool { return fs.HasSeed(seed) }) {
			continue // every forget set's own seeds leave this one out
		}
		base := cfg.Architecture
		if base == "" {
			base = experiment.SeedPath(cfg.Model, seed)
		}
		baseSum := "" // hashed when an oracle is trained from base
		baseKey := func() (string, error) {
			var err error
			if baseSum == "" {
				key := "architecture"
				if cfg.Architecture == "" {
					key = "model"
				}
				baseSum, err = hashModel(ctx, key, base)
			}
			return baseSum, err
		}
		// The original is trained when the first run of its seed needs it:
		// a seed whose runs all have records needs no model at all.
		orig := experiment.SeedPath(cfg.Model, seed)
		var origDir, origID string
		if orig == "" {
			sum, err := baseKey()
			if err != nil {
				return err
			}
			origID = experiment.OriginalKey(sum, dataSum, cfg.Train, seed)
			origDir = filepath.Join(cfg.Out, "runs", "original-"+origID)
			orig = filepath.Join(origDir, "model.onnx")
		} else {
			sum, err := hashModel(ctx, "model", orig)
			var side *sidecar
			if errors.Is(err, os.ErrNotExist) && (r.job.ReportOnly || r.dryRun) {
				// A report or a dry run without the model (a fresh clone,
				// where models are not committed) takes the SHA-256 its
				// training script's sidecar records.
				if side, err = readSidecar(ctx, orig, "", false); errors.Is(err, os.ErrNotExist) {
					// Not trained yet: its forget sets are left out, named.
					for _, fs := range cfg.ForgetSets {
						if !fs.HasSeed(seed) {
							continue
						}
						r.missing = append(r.missing, fmt.Sprintf("%s, seed %d", fs.Name, seed))
					}
					r.say(fmt.Sprintf("original (seed %d)", seed),
						"not trained yet (no "+filepath.Base(strings.TrimSuffix(orig, filepath.Ext(orig)))+".json)", "")
					continue
				} else if err == nil {
					sum = side.ONNXSHA256
				}
			}
			if err != nil {
				return fmt.Errorf("model of seed %d: %w", seed, err)
			}
			origID = sum
			if base == orig && side == nil {
				baseSum = sum // the file an oracle of the tool's would start from
			}
		}
		origRef := experiment.OriginalRef(origID, seed)
		origReady := origDir == ""
		needOrig := func() error {
			if origReady {
				return nil
			}
			if _, err := r.trainStep(ctx, origDir, fmt.Sprintf("original (seed %d)", seed), "", base, nil, seed); err != nil {
				return err
			}
			origReady = true
			return nil
		}
		for _, fs := range cfg.ForgetSets {
			if !fs.HasSeed(seed) {
				continue // the set's own seeds leave this one out
			}
			if ctx.Err() != nil {
				return unlearn.ErrInterrupted
			}
			var ids []int
			var err error
			if fs.Kind == "file" {
				ids, err = data.ReadIDs(experiment.SeedPath(fs.IDs, seed), nTrain)
				slices.Sort(ids)
			} else {
				ids, err = experiment.ForgetIDs(fs, seed, labels)
			}
			if err != nil {
				return fmt.Errorf("forget set %s (seed %d): %w", fs.Name, seed, err)
			}
			idsFile := experiment.IDsFile(fs, seed, ids)
			idsPath := filepath.Join(cfg.Out, "runs", fmt.Sprintf("forget-%s-seed%d.txt", experiment.FileName(fs.Name), seed))
			fset := forgetSet{ForgetSet: fs, ids: ids, path: idsPath}
			idsKey := experiment.IDsKey(fs, seed, ids)
			var okey string
			outside := experiment.SeedPath(fs.Oracle, seed)
			var side *sidecar
			if outside != "" {
				side, err = readSidecar(ctx, outside, rawDataSum, !r.dryRun)
				if err != nil && errors.Is(err, os.ErrNotExist) && (r.job.ReportOnly || r.dryRun) {
					// Not trained yet: a report or a listing of a grid in
					// progress names it instead of refusing the rest.
					r.missing = append(r.missing, fmt.Sprintf("%s, seed %d", fs.Name, seed))
					r.say(fmt.Sprintf("oracle %s (seed %d)", fs.Name, seed),
						"not trained yet (no "+filepath.Base(strings.TrimSuffix(outside, filepath.Ext(outside)))+".json)", "")
					continue
				}
				if err != nil {
					return fmt.Errorf("forget set %s (seed %d): oracle: %w", fs.Name, seed, err)
				}
				okey = experiment.OutsideOracleKey(side.ONNXSHA256, side.DataSHA256, seed, idsKey)
			} else {
				sum, err := baseKey()
				if err != nil {
					return err
				}
				okey = experiment.OracleKey(sum, dataSum, cfg.Train, seed, idsKey)
			}
			// The ids file the steps read is written once the forget set's
			// oracle passed its checks (a refused sidecar used to leave it
			// behind), and never through a link in its place.
			if !r.dryRun {
				if err := r.checkOutputs(idsPath); err != nil {
					return err
				}
				if err := outfile.WriteFile(idsPath, []byte(idsFile)); err != nil {
					return err
				}
			}
			r.addKey(okey)
			odir := filepath.Join(cfg.Out, "runs", "oracle-"+okey)
			what := fmt.Sprintf("oracle %s (seed %d)", fs.Name, seed)
			if _, ok := r.done[okey]; ok {
				r.say(what, "cached (results.jsonl)", okey)
			} else if outside != "" {
				if err := r.outsideOracle(ctx, odir, what, okey, fset, seed, outside, side); err != nil {
					return err
				}
			} else {
				oracleS, err := r.trainStep(ctx, odir, what, okey, base, ids, seed)
				if err != nil {
					return err
				}
				if err := r.oracleRecord(ctx, odir, okey, fset, seed, filepath.Join(odir, "model.onnx"), oracleS,
					r.machine); err != nil {
					return err
				}
			}
			// A run's time is measured against the oracle's training time
			// on the same machine: an oracle recorded elsewhere (or before
			// records named their machine) is retrained here once, for its
			// time only; its metrics stay the record's.
			timedS, timed := 0.0, false
			oracleTime := func() (float64, error) {
				if outside != "" {
					// Timed by its sidecar (read now: a sidecar re-timed
					// on this machine times later runs), and only on this
					// machine with the grid's threads; otherwise the runs
					// go untimed rather than timed against a retraining
					// the tool would do differently.
					if side.Machine == r.machine && r.machine != "" && side.Threads == cfg.Threads {
						return side.TrainS, nil
					}
					return 0, nil
				}
				rec := r.done[okey]
				if r.machine == "" || rec.Machine == r.machine || r.dryRun && rec.Key == "" {
					return rec.Seconds, nil
				}
				if !timed {
					tdir := filepath.Join(cfg.Out, "runs", "oracle-time-"+experiment.OracleTimeKey(okey, r.machine))
					s, err := r.trainStep(ctx, tdir, fmt.Sprintf("oracle %s (seed %d), timed on this machine", fs.Name, seed), "",
						base, ids, seed)
					if err != nil {
						return 0, err
					}
					timedS, timed = s, true
				}
				return timedS, nil
			}
			if sc := cfg.Score; sc != nil && seed == sc.Seed && slices.Contains(sc.ForgetSets, fs.Name) {
				r.scoreTargets = append(r.scoreTargets, scoreTarget{fs: fset, seed: seed, orig: orig, needOrig: needOrig,
					okey: okey, idsKey: idsKey, origRef: origRef})
			}
			for _, m := range cfg.Methods {
				budgets := m.Budgets
				if len(budgets) == 0 {
					budgets = []float64{0}
				}
				for _, budget := range budgets {
					key := r.runKey(m, budget, seed, idsKey, origRef, okey)
					r.addKey(key)
					if err := r.methodStep(ctx, key, m, budget, fset, seed, orig, needOrig, okey, oracleTime); err != nil {
						return err
					}
				}
			}
		}
	}
	// The score's audits come after the whole grid: its rows' records are
	// the grid's, and the audits take the longest.
	return r.scoreAll(ctx)
}

// runKey keys row m at budget for a seed, forget set, original and
// oracle, with this config's attack setting and the tool's auto rule and
// default (the grid's records and the score audits' folders).
func (r *state) runKey(m experiment.Method, budget float64, seed uint64, idsKey, origRef, okey string) string {
	// The rows were checked (Choose) before the first key: the settings
	// parse.
	if s, err := unlearn.Canonical(m.Settings); err == nil {
		m.Settings = s
	}
	return experiment.RunKey(m, budget, seed, idsKey, origRef, okey, r.cfg.NoMIA, unlearn.AutoVersion, defaultKey())
}

// defaultKey is the recommended default as the default rows' keys hold it
// (experiment.RunKey's recommended): each of unlearn.RecommendedSettings
// as the command line spelled it when the keys were defined, then the auto
// rule: "--method del --budget 0.1 --depth-floor 0.4 --schedule auto (auto
// rule 9)". The bytes are frozen, since results.jsonl caches hold them;
// they are part of a key, which no one reads.
func defaultKey() string {
	var parts []string
	for _, s := range unlearn.RecommendedSettings() {
		parts = append(parts, keyFlagPrefix+s.Name+" "+s.Value)
	}
	key := strings.Join(parts, " ")
	if unlearn.Recommended.Schedule == unlearn.ScheduleAuto {
		key += fmt.Sprintf(" (auto rule %d)", unlearn.AutoVersion)
	}
	return key
}

// keyFlagPrefix begins each setting in defaultKey: the flag syntax the
// keys were first written in. It is the one flag-like string outside the
// command (TestLibraryBuildsNoFlagText allows it by name): a cache key's
// frozen encoding, never shown.
const keyFlagPrefix = "--"

// terms are the Terms the job's outputs name settings in.
func (r *state) terms() setting.Terms {
	if r.job.Terms == nil {
		return setting.Plain
	}
	return r.job.Terms
}

// command is the tool's command name given settings, in the job's terms:
// "unlearn experiment --config exp.yaml" for the command line.
func (r *state) command(name string, settings ...setting.Ref) string {
	return r.terms().Command(setting.Command(name, settings...))
}

// forgetSet is a forget set drawn for a seed: its ids and ids file.
type forgetSet struct {
	experiment.ForgetSet
	ids  []int
	path string
}

func (r *state) addKey(k string) {
	if !r.keys[k] {
		r.keys[k] = true
		r.keyList = append(r.keyList, k)
	}
}

func (r *state) say(what, state, key string) {
	if r.silent || r.job.Step == nil {
		return
	}
	r.job.Step(what, state, key)
}

// trainStep trains base from scratch (without the ids in exclude, if set)
// into dir/model.onnx unless dir/done.json exists; it returns the training
// seconds (unlearn.RetrainResult.TrainS: the epochs alone). key is the
// step's record key for Job.Step ("" for steps without a record).
func (r *state) trainStep(ctx context.Context, dir, what, key, base string, exclude []int,
	seed uint64) (float64, error) {
	var done struct {
		TrainS float64 `json:"train_s"`
	}
	if b, err := readOut(r.cfg.Out, filepath.Join(dir, "done.json"), "step file",
		maxStepFileSize); err == nil && json.Unmarshal(b, &done) == nil {
		r.say(what, "cached", key)
		return done.TrainS, nil
	}
	if r.dryRun {
		r.say(what, "to run", key)
		return 0, nil
	}
	if err := r.setup(); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	lg, err := r.createLog(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	defer lg.close()
	t := r.cfg.Train
	aug, err := data.ParseAugment(t.Augment) // checked by experiment.Load
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	out := filepath.Join(dir, "model.onnx")
	r.say(what, "training", key)
	start := time.Now()
	res, err := unlearn.Retrain(ctx, unlearn.RetrainJob{ModelPath: base, Data: r.ds, Exclude: exclude, FromScratch: true,
		Epochs: t.Epochs, LR: t.LR, BatchSize: t.BatchSize, Momentum: t.Momentum, WeightDecay: t.WeightDecay,
		Schedule: t.Schedule, Augment: aug, Seed: seed, Runtime: r.rt, Out: out, Info: lg.info, Progress: lg.bar("train")})
	if err != nil {
		return 0, lg.fail(what, err)
	}
	lg.result("out", out, "train_accuracy", res.TrainAccuracy, "test_accuracy", res.TestAccuracy, "train_s", res.TrainS)
	done.TrainS = res.TrainS
	if done.TrainS == 0 {
		done.TrainS = time.Since(start).Seconds()
	}
	b, _ := json.Marshal(done)
	return done.TrainS, outfile.WriteFile(filepath.Join(dir, "done.json"), b)
}

// sidecar is what the script that trained an outside oracle wrote beside
// it (the model's path with .json for .onnx): the model's and the
// training data's SHA-256 (the oracle's key), and the seconds of its
// training epochs on machine (the CPU as the records name it) with
// threads.
type sidecar struct {
	ONNXSHA256 string  `json:"onnx_sha256"`
	DataSHA256 string  `json:"data_sha256"`
	TrainS     float64 `json:"train_s"`
	Machine    string  `json:"machine"`
	Threads    int     `json:"threads"`
}

// readSidecar reads the sidecar of the outside model at path and checks
// it; with verify, it also checks that the model's bytes are the ones the
// sidecar names and, when dataSum is known, that the model was trained on
// this data.
func readSidecar(ctx context.Context, path, dataSum string, verify bool) (*sidecar, error) {
	name := strings.TrimSuffix(path, filepath.Ext(path)) + ".json"
	b, err := fsread.File(name, "sidecar", maxSidecarSize)
	if err != nil {
		return nil, fmt.Errorf("%w (the training script writes it beside the model)", err)
	}
	s, err := parseSidecar(b, name)
	if err != nil {
		return nil, err
	}
	if !verify {
		return s, nil
	}
	got, err := hashModel(ctx, "oracle", path)
	if err != nil {
		return nil, err
	}
	if got != s.ONNXSHA256 {
		return nil, fmt.Errorf("%s: SHA-256 %s, but %s names %s: the model changed after its "+
			"sidecar was written", path, got, name, s.ONNXSHA256)
	}
	if dataSum != "" && dataSum != s.DataSHA256 {
		return nil, fmt.Errorf("%s: trained on data with SHA-256 %s, not on this experiment's data (%s)",
			name, s.DataSHA256, dataSum)
	}
	return s, nil
}

// maxSidecarSize bounds a sidecar: a few hundred bytes of JSON.
const maxSidecarSize = 1 << 20

// parseSidecar decodes the sidecar b (the file name, for errors) and checks
// every field: the two digests, the training seconds with the records'
// bounds (experiment.CheckOracleSeconds: they become the oracle record's),
// the machine's length and the threads.
//
// A refusal is an error in the experiment's inputs (experiment.ErrConfig,
// exit code 2): the sidecar describes an oracle or original the
// experiment file names.
func parseSidecar(b []byte, name string) (*sidecar, error) {
	s, err := decodeSidecar(b, name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", experiment.ErrConfig, err)
	}
	return s, nil
}

func decodeSidecar(b []byte, name string) (*sidecar, error) {
	var s sidecar
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: not a sidecar (%v)", name, err)
	}
	isHex := func(v string) bool {
		_, err := hex.DecodeString(v)
		return err == nil && len(v) == 64
	}
	switch {
	case !isHex(s.ONNXSHA256) || !isHex(s.DataSHA256):
		return nil, fmt.Errorf("%s: onnx_sha256 and data_sha256 must be SHA-256 digests in hex", name)
	case len(s.Machine) > 512:
		return nil, fmt.Errorf("%s: machine: longer than 512 bytes", name)
	case s.Threads < 0 || s.Threads > experiment.MaxThreads:
		return nil, fmt.Errorf("%s: threads %d: want [0, %d]", name, s.Threads, experiment.MaxThreads)
	}
	// train_s becomes the oracle record's seconds and oracle_seconds:
	// checked with the records' own bounds.
	if err := experiment.CheckOracleSeconds("train_s", s.TrainS); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// outsideOracle records an oracle trained outside the tool (the forget
// set's Oracle at path, described by side): evaluated as oracleRecord
// evaluates the tool's, with the sidecar's training seconds and machine.
func (r *state) outsideOracle(ctx context.Context, dir, what, key string, fs forgetSet, seed uint64, path string,
	side *sidecar) error {
	if r.dryRun {
		r.say(what, "to run", key)
		return nil
	}
	r.say(what, "evaluating "+filepath.Base(path), key)
	if err := r.setup(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return r.oracleRecord(ctx, dir, key, fs, seed, path, side.TrainS, side.Machine)
}

// evalOptions are the evaluation settings of the tool's commands at their
// defaults, batch aside: the SVC attacks unless the config says no_mia,
// Song & Mittal's modified entropy, attack seed 0.
func (r *state) evalOptions(batch int) eval.Options {
	o := eval.Options{Runtime: r.rt, BatchSize: batch, NoMIA: r.cfg.NoMIA}
	o.MIA.MEntropy = eval.MEntropySongMittal
	return o
}

// oracleRecord evaluates the oracle once (its own metrics; Δ is 0 by
// definition), as `unlearn eval --json` would (batch 256), and records it
// as trained in trainS seconds on machine.
func (r *state) oracleRecord(ctx context.Context, dir, key string, fs forgetSet, seed uint64, oracle string,
	trainS float64, machine string) error {
	recPath := filepath.Join(dir, "record.json")
	if b, err := readOut(r.cfg.Out, recPath, "record file", maxStepFileSize); err == nil {
		// Recorded once but missing from results.jsonl: the runs still
		// need it to measure against.
		var rec experiment.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("%s: %v", recPath, err)
		}
		r.done[key] = rec
		return nil
	}
	if r.dryRun {
		return nil
	}
	if ctx.Err() != nil {
		return unlearn.ErrInterrupted
	}
	const what = "oracle evaluation"
	lg, err := r.createLog(filepath.Join(dir, "eval-log.jsonl"))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer lg.close()
	metrics := filepath.Join(dir, "metrics.json")
	if err := r.evaluate(oracle, fs, metrics, lg); err != nil {
		return lg.fail(what, err)
	}
	lg.result("json", metrics)
	doc, err := readMetrics(r.cfg.Out, metrics)
	if err != nil {
		return err
	}
	rec := experiment.Record{Schema: experiment.RecordSchema, Key: key, Kind: "oracle", ForgetSet: fs.Name, Seed: seed,
		Name: "Retrain (oracle)", Accuracy: doc.Accuracy, MIA: numbers(doc.MIA), Delta: map[string]float64{},
		Seconds: trainS, OracleSeconds: trainS, Forget: len(fs.ids), Machine: machine}
	for k := range doc.Accuracy {
		rec.Delta[k] = 0
	}
	for k := range rec.MIA {
		rec.Delta["mia_"+k] = 0
	}
	return r.record(recPath, rec)
}

// evaluate measures the model at path on the forget set fs and writes its
// metrics.json, as `unlearn eval --model path --forget ids --json metrics`
// does.
func (r *state) evaluate(path string, fs forgetSet, metrics string, lg *stepLog) error {
	s, err := eval.NewSuite(r.ds, fs.path, fs.ids, r.evalOptions(256))
	if err != nil {
		return err
	}
	s.Bar = lg.bar
	m, err := s.Load(path, "model")
	if err != nil {
		return err
	}
	met, err := s.Evaluate(m, path, "model")
	if err != nil {
		return err
	}
	rep := &schema.Report{Schema: schema.MetricsSchema, Tool: r.job.Tool, Metrics: &met.Metrics, Settings: s.Settings(met)}
	if rep.Model, err = eval.NewModelInfo(path); err != nil {
		return err
	}
	if rep.Data, rep.Forget, err = s.Provenance(); err != nil {
		return err
	}
	return writeReport(rep, metrics)
}

// methodStep runs one method at one budget (unless results.jsonl or its
// directory has its record), measured against the oracle record okey;
// needOrig makes sure the original model exists, oracleTime gives the
// oracle's training seconds on this machine.
func (r *state) methodStep(ctx context.Context, key string, m experiment.Method, budget float64, fs forgetSet,
	seed uint64, orig string, needOrig func() error, okey string, oracleTime func() (float64, error)) error {
	dir := filepath.Join(r.cfg.Out, "runs", "run-"+key)
	what := fmt.Sprintf("%s on %s (seed %d)", m.Name, fs.Name, seed)
	if budget > 0 {
		what = fmt.Sprintf("%s α=%g on %s (seed %d)", m.Name, budget, fs.Name, seed)
	}
	recPath := filepath.Join(dir, "record.json")
	if _, ok := r.done[key]; ok {
		r.say(what, "cached (results.jsonl)", key)
		return nil
	}
	if _, err := os.Stat(recPath); err == nil {
		r.say(what, "cached", key)
		return nil
	}
	ch, err := Choose(m, budget)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := needOrig(); err != nil {
		return err
	}
	oracleS, err := oracleTime()
	if err != nil {
		return err
	}
	if r.dryRun {
		r.pending = append(r.pending, pendingRun{name: m.Name, budget: budget, forgetSet: fs.Name, seed: seed})
		r.say(what, "to run", key)
		return nil
	}
	orec, ok := r.done[okey]
	if !ok {
		return fmt.Errorf("%s: no oracle record %s in %s", what, okey, r.results)
	}
	if err := r.setup(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	metrics := filepath.Join(dir, "metrics.json")
	logPath := filepath.Join(dir, "log.jsonl")
	r.say(what, "running (log: "+logPath+")", key)
	lg, err := r.createLog(logPath)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer lg.close()
	resetPeakMemory()
	if err := r.unlearn(ctx, ch, orig, fs, seed, dir, metrics, lg); err != nil {
		return lg.fail(what, err)
	}
	doc, err := readMetrics(r.cfg.Out, metrics)
	if err != nil {
		return err
	}
	rec := experiment.Record{Schema: experiment.RecordSchema, Key: key, Kind: "run", ForgetSet: fs.Name, Seed: seed,
		Name: m.Name, Strategy: doc.Unlearning.Strategy, Algorithm: doc.Unlearning.Algorithm, Budget: budget,
		Accuracy: doc.Accuracy, MIA: numbers(doc.MIA), Delta: map[string]float64{},
		Seconds: doc.Unlearning.Timings.LocalizeS + doc.Unlearning.Timings.UnlearnS, OracleSeconds: oracleS,
		Forget: len(fs.ids), CommandSeconds: doc.Unlearning.Timings.TotalS, Machine: r.machine,
		PeakRSSMiB: doc.Unlearning.Timings.PeakRSSMiB}
	if rec.OriginalSHA256, err = hashModel(ctx, "model", orig); err != nil {
		return err
	}
	if m.Default && doc.Unlearning.Strategy != "full" {
		rec.Budget = doc.Unlearning.Budget // the default's, for the α column
	}
	if a := doc.Unlearning.Auto; a != nil {
		rec.Schedule, rec.Epochs, rec.LR, rec.Stop = "auto", a.StopEpoch, a.LR, a.Reason
	}
	for _, f := range doc.Unlearning.Flags {
		rec.Flags = append(rec.Flags, f.Kind)
	}
	rec.Vouched = doc.Unlearning.Vouched
	if p := doc.Unlearning.Proxies; p != nil && p.Estimate != nil {
		rec.Estimate = map[string]float64{"forget": p.Estimate.ReferenceAccuracy, "test": p.Estimate.TestAccuracy}
	}
	if t := doc.Unlearning.Tolerances; t != nil {
		rec.Tolerances = map[string]float64{"forget": t.Forget, "test": t.Test}
	}
	rec.EpochsEquivalent = doc.Unlearning.EpochsEquivalent
	for k, v := range doc.Accuracy {
		if o, ok := orec.Accuracy[k]; ok {
			rec.Delta[k] = o - v
		}
	}
	for k, v := range rec.MIA {
		if o, ok := orec.MIA[k]; ok {
			rec.Delta["mia_"+k] = o - v
		}
	}
	// The model stays for inspection; metrics.json and record.json are the
	// cache.
	return r.record(recPath, rec)
}

// unlearn runs the row's choices on the original, as the main command
// would with `--model orig --forget ids --no-before --out dir/model.onnx
// --metrics metrics --seed seed` and the row's flags: batch 128, the
// evaluation settings of evalOptions. The original and the oracle are
// evaluated once per seed and forget set (the oracle by oracleRecord), not
// in every run; Δ is computed from the two records, as eval.NewDelta does.
func (r *state) unlearn(ctx context.Context, ch Choices, orig string, fs forgetSet, seed uint64, dir, metrics string,
	lg *stepLog) error {
	j, err := r.unlearnJob(ch, fs, seed, lg)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "model.onnx")
	j.ModelPath, j.Out, j.MetricsPath = orig, out, metrics
	o, err := unlearn.Unlearn(ctx, j)
	if err != nil {
		return err
	}
	u := o.Report.Unlearning
	lg.result("out", out, "metrics", metrics, "accuracy", o.Report.Metrics.Accuracy,
		"changed_params", o.Audit.ChangedParams, "total_params", o.Audit.TotalParams,
		"outside_mask_bit_identical", o.Audit.BitIdentical, "timings", u.Timings)
	return nil
}

// unlearnJob is the row's choices on forget set fs with seed as the main
// command runs them without a model or outputs (the caller's): batch 128
// (the row's batch_size, when given, for the unlearning), the evaluation
// settings of evalOptions, no "before" evaluation.
// AllowChance when the experiment trains its originals itself (from an
// architecture), on the data as it opens them: a weak original is then
// its recipe's (a smoke test's one epoch), not a preprocessing mismatch. A
// given model: is checked like the main command's.
func (r *state) unlearnJob(ch Choices, fs forgetSet, seed uint64, lg *stepLog) (unlearn.Job, error) {
	const batch = 128
	s, err := eval.NewSuite(r.ds, fs.path, fs.ids, r.evalOptions(batch))
	if err != nil {
		return unlearn.Job{}, err
	}
	s.Bar = lg.bar
	cfg, err := unlearn.Configure(ch.Algorithm, ch.Recipe)
	if err != nil {
		return unlearn.Job{}, err
	}
	cfg.BatchSize, cfg.Seed, cfg.Proxies.NoMIA, cfg.Augment = batch, seed, r.cfg.NoMIA, ch.Augment
	if ch.BatchSize > 0 {
		cfg.BatchSize = ch.BatchSize // the row's, for its training; the evaluation keeps 128
	}
	return unlearn.Job{Suite: s, Method: ch.Method, Strategy: ch.Strategy, Budget: ch.Budget,
		DepthFloor: ch.DepthFloor, Widen: ch.Widen, WidenFloor: ch.WidenFloor,
		Algorithm: ch.Algorithm, Config: cfg, NoBefore: true, AllowChance: r.cfg.Model == "", Tool: r.job.Tool,
		Info: lg.info, Bar: lg.bar, Terms: r.job.Terms}, nil
}

// readAll reads the records of results.jsonl and of every shard's
// results.shard-*.jsonl in out (os.ErrNotExist when there are none) as one
// experiment.RecordSet: a key recorded differently in two places is
// refused, naming both; the set's warnings name what was left out.
func readAll(out string) (*experiment.RecordSet, error) {
	shards, _ := filepath.Glob(filepath.Join(out, "results.shard-*.jsonl"))
	var set experiment.RecordSet
	found := false
	for _, p := range append([]string{filepath.Join(out, "results.jsonl")}, shards...) {
		err := set.Read(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		found = true
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", filepath.Join(out, "results.jsonl"), os.ErrNotExist)
	}
	return &set, nil
}

// warn reports a warning through Job.Info, once (the grid and the report
// both read the results files).
func (r *state) warn(text string) {
	if r.job.Info == nil || r.warned[text] {
		return
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[text] = true
	r.job.Info("warning", "warning: "+text)
}

// record writes the step's record and appends it to results.jsonl (or the
// shard's file).
func (r *state) record(path string, rec experiment.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := outfile.Append(r.results)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	r.done[rec.Key] = rec
	return outfile.WriteFile(path, b)
}

// maxModelSize bounds a model file the experiment names (model:,
// architecture:, a forget set's oracle:): onnxio reads no model over 2 GiB
// (protobuf's limit), so a larger file is refused before it is hashed.
const maxModelSize = 2 << 30

// hashModel returns the SHA-256 of the model file at path that the
// experiment file's key (model, architecture, oracle) names, through
// fsread.HashInput: a regular file of at most maxModelSize bytes, checked
// on the opened descriptor before a byte is hashed (a folder such as /usr,
// /dev/zero, a FIFO or a 20 GB sparse file is refused at once, without
// blocking), hashed from that descriptor and stopped by ctx. A refusal is
// an error in the experiment file (experiment.ErrConfig, exit code 2)
// naming the key; a missing file stays os.ErrNotExist (a report without
// the models reads their sidecars), an interruption unlearn.ErrInterrupted.
func hashModel(ctx context.Context, key, path string) (string, error) {
	sum, err := fsread.HashInput(ctx, path, "model", maxModelSize)
	switch {
	case err == nil:
		return sum, nil
	case ctx.Err() != nil:
		return "", unlearn.ErrInterrupted
	case errors.Is(err, os.ErrNotExist):
		return "", err
	}
	return "", fmt.Errorf("%w: %s: %w", experiment.ErrConfig, key, err)
}

// readOut reads a file the grid wrote at path under out (a step's
// done.json, record.json or metrics.json, an audit's score.json) through
// fsread.FileBeneath: every folder from out down is opened relative to the
// one before and must be the folder checked, no link may lie anywhere on
// the way, and the file is read from the descriptor checked (a regular
// file with one hard link, at most limit bytes). Another process writing
// the shared volume can then neither redirect the read by swapping a
// folder for a link nor plant a hard link to a file elsewhere. A path
// outside out (none of the grid's) is read with fsread.FileNoLink.
func readOut(out, path, what string, limit int64) ([]byte, error) {
	rel, err := filepath.Rel(out, path)
	if err != nil || !filepath.IsLocal(rel) {
		return fsread.FileNoLink(path, what, limit)
	}
	return fsread.FileBeneath(out, rel, what, limit)
}

// The files the runner reads back from out (which other processes may
// write: a shared volume) are regular files, not links, within these
// sizes (readOut).
const (
	maxStepFileSize = 1 << 20  // done.json, record.json
	maxMetricsSize  = 64 << 20 // metrics.json
	maxScoreSize    = 256 << 20
)

// metricsDoc is what the records take from a metrics.json.
type metricsDoc struct {
	Accuracy   map[string]float64 `json:"accuracy"`
	MIA        map[string]any     `json:"mia"`
	Unlearning struct {
		Strategy, Algorithm string
		Budget              float64
		Timings             schema.UnlearningTimings
		Auto                *schema.AutoSchedule
		Flags               []schema.Flag
		Vouched             bool
		Proxies             *schema.ProxyLog
		Tolerances          *schema.Tolerances
		EpochsEquivalent    float64 `json:"epochs_equivalent"`
	}
}

// readMetrics reads the record's numbers back from the metrics.json just
// written, so that a record holds exactly what the file says.
func readMetrics(out, path string) (*metricsDoc, error) {
	b, err := readOut(out, path, "metrics file", maxMetricsSize)
	if err != nil {
		return nil, err
	}
	var doc metricsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &doc, nil
}

// numbers keeps the numeric entries of a JSON object.
func numbers(m map[string]any) map[string]float64 {
	if m == nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range m {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}
