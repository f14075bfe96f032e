package scoring

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/score"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/taskindex"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// ErrSettings marks a results folder made with other settings than the
// run's, and task files that do not belong to the folder.
var ErrSettings = errors.New("results folder mismatch")

// ErrMissing is returned by a gathering run when tasks have no result yet.
var ErrMissing = errors.New("tasks without a result")

// ErrNoAudit is returned by a gathering run on a folder without the
// audit's settings file (or the oracles folder without its own).
var ErrNoAudit = errors.New("no audit to gather")

// Job is one audit: the original model, the data and forget set, the
// method, the oracles' recipe, K, and the results folder.
type Job struct {
	// ModelPath is the original model (never written).
	ModelPath string
	// Suite holds the data, the forget set and the runtime and batch size
	// every model is evaluated with (its MIA settings are not used: the
	// unlearning runs evaluate without the attacks).
	Suite *eval.Suite
	// Method is the unlearning run as the main command fills it (Method,
	// Strategy, Budget, Algorithm, Config, Classifier, AllowChance);
	// unlearned model k runs with Config.Seed + k. Its paths, Suite and
	// NoBefore are set per task.
	Method unlearn.Job
	// Oracle is the oracles' recipe (Epochs, LR, Schedule, Momentum,
	// WeightDecay, BatchSize, Augment); oracle k trains from scratch
	// without the forget set with seed Oracle.Seed + k. Its paths, data
	// and runtime are set per task.
	Oracle unlearn.RetrainJob
	// K is the number of models per side (at least 2).
	K int
	// RetainSample and TestSample are the sizes of the seeded samples of
	// the retain set and the test split (≤ 0 or more than the split:
	// all of it); SampleSeed seeds them.
	RetainSample, TestSample int
	SampleSeed               uint64
	// Dir is the results folder (created if missing).
	Dir string
	// OracleDir is the folder of the oracle tasks (default: Dir). Audits
	// of several methods on the same model, data, forget set, samples and
	// oracle recipe share their K oracles there: an oracle's result file
	// carries the digest of that part of the setup only (the method and K
	// left out), and OracleDir/oracles.json records it.
	OracleDir string
	// Shards > 0 runs only the tasks whose index ≡ Shard (mod Shards) and
	// does not gather; 0 runs every task and gathers.
	Shard, Shards int
	// Gather runs no task: it scores a folder whose tasks are all done.
	Gather bool
	// KeepModels keeps every model under Dir/models/.
	KeepModels bool
	// Bootstrap sets the intervals (score.Summarize).
	Bootstrap score.BootstrapOptions
	// JSONPath and ReportPath are score.json and the HTML section
	// (defaults: Dir/score.json, Dir/score.html).
	JSONPath, ReportPath string
	// Tool names the program in score.json.
	Tool string
	// Info receives the runs' steps (event, text, key-value pairs); Bar
	// returns a progress callback; Task gets each task's state ("cached",
	// "running", "done", "missing").
	Info func(event, text string, fields ...any)
	Bar  func(label string) func(done, total int)
	Task func(name, state string)
}

// Outcome is what Run did.
type Outcome struct {
	// Ran, Cached and Missing name tasks ("oracle 3", "unlearned 0").
	Ran, Cached, Missing []string
	// Report is the score (nil when not gathered).
	Report               *schema.ScoreReport
	JSONPath, ReportPath string
}

// task is one of the 2K tasks.
type task struct {
	kind  string
	index int // within its kind
	seed  uint64
}

func (t task) name() string { return fmt.Sprintf("%s %d", t.kind, t.index) }
func (t task) file() string { return fmt.Sprintf("%s-%04d", t.kind, t.index) }

// Tasks lists the job's tasks in index order: oracles 0..K-1, then
// unlearned 0..K-1.
func (job *Job) tasks() []task {
	out := make([]task, 0, 2*job.K)
	for k := range job.K {
		out = append(out, task{schema.ScoreOracle, k, job.Oracle.Seed + uint64(k)})
	}
	for k := range job.K {
		out = append(out, task{schema.ScoreUnlearned, k, job.Method.Config.Seed + uint64(k)})
	}
	return out
}

// ShardOf says whether task index i belongs to shard of shards.
func ShardOf(i, shard, shards int) bool { return shards <= 0 || i%shards == shard }

// Entries are what a run creates in the results folder besides the score
// files.
var Entries = []string{"tasks", "work", "models", "settings.json", "oracles.json"}

// Paths are the score's JSON and HTML files: as given, or score.json and
// score.html in the results folder dir.
func Paths(dir, jsonPath, reportPath string) (string, string) {
	if jsonPath == "" {
		jsonPath = filepath.Join(dir, "score.json")
	}
	if reportPath == "" {
		reportPath = filepath.Join(dir, "score.html")
	}
	return jsonPath, reportPath
}

// MaxK bounds K: an audit trains 2K models, and its gathering holds
// every task's outputs in memory.
const MaxK = 4096

// MaxResamples bounds the bootstrap's resamples (Job.Bootstrap).
const MaxResamples = 100000

// Validate checks the bounds of the job's settings before any work: K in
// [2, MaxK], the oracles' batch size, the bootstrap's resamples, and no
// more shards than the audit's 2K tasks (more would leave shards with
// nothing to run, which a batch engine reports as success). An error names
// the field at fault by its path.
func (job *Job) Validate() error {
	switch n := 2 * job.K; {
	case job.K < 2 || job.K > MaxK:
		return setting.FieldErrorf("K", " %d: must be in [2, %d] (models per side; the audit trains 2K models)",
			job.K, MaxK)
	case job.Oracle.BatchSize < 1 || job.Oracle.BatchSize > data.MaxBatchSize:
		return setting.FieldErrorf("Oracle.BatchSize", " %d: must be in [1, %d]", job.Oracle.BatchSize,
			data.MaxBatchSize)
	case job.Bootstrap.Resamples > MaxResamples:
		return setting.FieldErrorf("Bootstrap.Resamples", " %d: at most %d resamples", job.Bootstrap.Resamples,
			MaxResamples)
	case job.Shards > n:
		return setting.FieldErrorf("Shards", " %d: more shards than the audit's tasks (%d > %d, 2 per %s), so %d "+
			"shards would run nothing; give %s or fewer, run as %s", job.Shards, job.Shards, n, setting.Field("K"),
			job.Shards-n, setting.FieldUse("Shards", n), taskindex.Array(n))
	}
	return nil
}

func (job *Job) check() error {
	switch {
	case job.K > MaxK:
		return fmt.Errorf("%w: K %d: at most %d models per side", unlearn.ErrInput, job.K, MaxK)
	case job.Bootstrap.Resamples > MaxResamples:
		return fmt.Errorf("%w: %d bootstrap resamples: at most %d", unlearn.ErrInput, job.Bootstrap.Resamples, MaxResamples)
	case job.Suite == nil || job.Suite.Data == nil || job.Suite.ForgetPath == "":
		return fmt.Errorf("%w: the audit needs data and a forget set", unlearn.ErrInput)
	case job.ModelPath == "" || job.Dir == "":
		return fmt.Errorf("%w: the audit needs a model and a results folder", unlearn.ErrInput)
	case job.K < 2:
		return fmt.Errorf("%w: K %d: need at least 2 models per side", unlearn.ErrInput, job.K)
	case job.Shards < 0:
		return fmt.Errorf("%w: %d shards: want 0 (no sharding) or a number of shards", unlearn.ErrInput, job.Shards)
	case job.Shards > 2*job.K:
		return fmt.Errorf("%w: %d shards of %d tasks (2K): %d shards would run nothing; at most %d", unlearn.ErrInput,
			job.Shards, 2*job.K, job.Shards-2*job.K, 2*job.K)
	case job.Shards > 0 && (job.Shard < 0 || job.Shard >= job.Shards):
		return fmt.Errorf("%w: shard %d of %d: the shard must be in [0, %d)", unlearn.ErrInput, job.Shard, job.Shards,
			job.Shards)
	case job.Gather && job.Shards > 0:
		return fmt.Errorf("%w: gathering reads every shard's results; it takes no shard", unlearn.ErrInput)
	case len(job.Suite.Retain) == 0 || job.Suite.Data.Test == nil || job.Suite.Data.Test.Len() == 0:
		return fmt.Errorf("%w: the audit needs retain examples and a test split", unlearn.ErrInput)
	}
	if _, err := unlearn.LookupAlgorithm(job.Method.Algorithm); err != nil {
		return err
	}
	if err := unlearn.CheckSettings(job.Method.Algorithm, job.Method.Config, job.Suite.Data,
		len(job.Suite.Retain)); err != nil {
		return err
	}
	o := job.Oracle
	o.ModelPath, o.Data, o.Out = job.ModelPath, job.Suite.Data, job.Dir
	if err := o.Check(); err != nil {
		return fmt.Errorf("oracle recipe: %w", setting.Under("Oracle", err))
	}
	return nil
}

type state struct {
	job          Job
	setup        schema.ScoreSetup
	retain, test []int
	// dirs and digest by task kind: the oracles' folder may be another
	// (OracleDir), and their files carry the digest of the oracle part of
	// the setup. A kind's results are in dir/tasks, its work in dir/work.
	dirs, digest map[string]string
}

// Run runs the job's tasks (those of its shard) that have no result in the
// folder yet, then, unless sharded, scores the folder. Cancelling ctx stops
// the running task, which leaves nothing behind.
func Run(ctx context.Context, job Job) (*Outcome, error) {
	if err := job.check(); err != nil {
		return nil, err
	}
	job.JSONPath, job.ReportPath = Paths(job.Dir, job.JSONPath, job.ReportPath)
	if job.OracleDir == "" {
		job.OracleDir = job.Dir
	}
	r := &state{job: job, dirs: map[string]string{schema.ScoreOracle: job.OracleDir, schema.ScoreUnlearned: job.Dir},
		digest: map[string]string{}}
	r.retain = sample(job.Suite.Retain, job.RetainSample, job.SampleSeed, 1)
	r.test = sample(data.Range(job.Suite.Data.Test.Len()), job.TestSample, job.SampleSeed, 2)
	st, err := r.settings()
	if err != nil {
		return nil, err
	}
	ost := st
	ost.Setup = OracleSetup(st.Setup)
	settings, oracles := filepath.Join(job.Dir, "settings.json"), filepath.Join(job.OracleDir, "oracles.json")
	// Both folders' settings are compared before anything is written, so
	// that a refused run leaves nothing behind; gathering writes only the
	// score.
	for _, f := range []struct {
		path string
		st   schema.ScoreSettings
	}{{settings, st}, {oracles, ost}} {
		if _, err := checkSettings(f.path, f.st); errors.Is(err, os.ErrNotExist) && job.Gather {
			return nil, fmt.Errorf("%w: %s does not exist (run the audit's tasks first, or check the folder's path)",
				ErrNoAudit, f.path)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if !job.Gather {
		for _, dir := range r.dirs {
			for _, sub := range []string{"tasks", "work"} {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
					return nil, err
				}
			}
		}
	}
	if r.digest[schema.ScoreUnlearned], err = syncSettings(settings, st); err != nil {
		return nil, err
	}
	if r.digest[schema.ScoreOracle], err = syncSettings(oracles, ost); err != nil {
		return nil, err
	}
	r.setup = st.Setup
	o := &Outcome{JSONPath: job.JSONPath, ReportPath: job.ReportPath}
	say := func(t task, state string) {
		if job.Task != nil {
			job.Task(t.name(), state)
		}
	}
	for i, t := range job.tasks() {
		mine := ShardOf(i, job.Shard, job.Shards) && !job.Gather
		done, err := r.taskDone(t, mine)
		if err != nil {
			return nil, err
		}
		if done {
			if mine {
				o.Cached = append(o.Cached, t.name())
				say(t, "cached")
			}
			continue
		}
		if !mine {
			o.Missing = append(o.Missing, t.name())
			continue
		}
		say(t, "running")
		if err := r.run(ctx, t); err != nil {
			return nil, fmt.Errorf("%s: %w", t.name(), err)
		}
		o.Ran = append(o.Ran, t.name())
		say(t, "done")
	}
	if job.Shards > 0 {
		return o, nil
	}
	if len(o.Missing) > 0 {
		return nil, fmt.Errorf("%w in %s: %v (run their shards first)", ErrMissing, job.Dir, o.Missing)
	}
	if o.Report, err = r.gather(); err != nil {
		return nil, err
	}
	return o, nil
}

// taskDone says whether task t has a result in the folder. A file cut
// short (ErrCutShort: its writer was interrupted) is not a result: outside
// a gathering run the task is not done, and when it is this run's (mine)
// it runs again, with a warning naming the file (the new file replaces the
// damaged one atomically). Gathering, and any other damage, is an error
// naming the file.
func (r *state) taskDone(t task, mine bool) (bool, error) {
	_, err := r.readTask(t)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case errors.Is(err, ErrCutShort) && !r.job.Gather:
		if mine && r.job.Info != nil {
			p := r.taskPath(t)
			r.job.Info("warning", fmt.Sprintf("warning: %s: not JSON, cut short (a write was interrupted): "+
				"running %s again", p, t.name()),
				"file", p, "task", t.name())
		}
		return false, nil
	}
	return false, err
}

// sample draws n of ids (all of them when n ≤ 0 or n ≥ len(ids)) with
// PCG(seed, stream), in increasing order.
func sample(ids []int, n int, seed, stream uint64) []int {
	if n <= 0 || n >= len(ids) {
		return slices.Clone(ids)
	}
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65+stream)) // "sample"
	perm := rng.Perm(len(ids))[:n]
	out := make([]int, n)
	for i, p := range perm {
		out[i] = ids[p]
	}
	slices.Sort(out)
	return out
}

// run runs one task in a temporary folder under Dir/work and writes its
// result file; the model is kept under Dir/models only with KeepModels.
func (r *state) run(ctx context.Context, t task) error {
	job := &r.job
	work, err := outfile.TempDir(filepath.Join(r.dirs[t.kind], "work", t.file()))
	if err != nil {
		return err
	}
	defer func() {
		os.RemoveAll(work)
		outfile.Untrack(work)
	}()
	model := filepath.Join(work, "model.onnx")
	res := schema.ScoreTask{Schema: schema.ScoreTaskSchema, Settings: r.digest[t.kind], Kind: t.kind, Index: t.index,
		Seed: t.seed}
	var bar func(int, int)
	if job.Bar != nil {
		bar = job.Bar(t.name())
	}
	switch t.kind {
	case schema.ScoreOracle:
		rj := job.Oracle
		rj.ModelPath, rj.Data, rj.Exclude, rj.FromScratch = job.ModelPath, job.Suite.Data, job.Suite.Forget, true
		rj.Seed, rj.Runtime, rj.Out, rj.Info, rj.Progress = t.seed, job.Suite.Options.Runtime, model, job.Info, bar
		out, err := unlearn.Retrain(ctx, rj)
		if err != nil {
			return err
		}
		res.Timings.TrainS = out.TrainS
	default:
		s := *job.Suite
		s.Options.NoMIA = true // the score needs no attack; the method's proxies keep theirs
		uj := job.Method
		uj.ModelPath, uj.Suite, uj.OraclePath, uj.MaskPath, uj.ReportPath, uj.NoBefore = job.ModelPath, &s, "", "", "", true
		uj.Out, uj.MetricsPath = model, filepath.Join(work, "metrics.json")
		uj.Config.Seed = t.seed
		uj.Info, uj.Bar = job.Info, job.Bar
		out, err := unlearn.Unlearn(ctx, uj)
		if err != nil {
			return err
		}
		res.Timings.TrainS = out.Report.Unlearning.Timings.LocalizeS + out.Report.Unlearning.Timings.UnlearnS
	}
	if ctx.Err() != nil {
		return unlearn.ErrInterrupted
	}
	start := time.Now()
	if err := r.evaluate(model, &res); err != nil {
		return err
	}
	res.Timings.EvalS = time.Since(start).Seconds()
	if job.KeepModels {
		dir := filepath.Join(r.dirs[t.kind], "models")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		res.Model = filepath.Join("models", t.file()+".onnx")
		if t.kind == schema.ScoreUnlearned {
			if err := os.Rename(filepath.Join(work, "metrics.json"), filepath.Join(dir, t.file()+".metrics.json")); err != nil {
				return err
			}
		}
		if err := os.Rename(model, filepath.Join(r.dirs[t.kind], res.Model)); err != nil {
			return err
		}
	}
	return writeJSON(r.taskPath(t), res)
}

func (r *state) taskPath(t task) string {
	return filepath.Join(r.dirs[t.kind], "tasks", t.file()+".json")
}

// evaluate fills res with the model's SHA-256 and its outputs on the
// forget set and the two samples.
func (r *state) evaluate(path string, res *schema.ScoreTask) error {
	s := r.job.Suite
	info, err := eval.NewModelInfo(path)
	if err != nil {
		return err
	}
	res.ModelSHA256 = info.SHA256
	m, err := s.Load(path, res.Kind)
	if err != nil {
		return err
	}
	batch := s.Options.BatchSize
	if batch <= 0 {
		batch = 256
	}
	cl, err := infer.NewClassifier(m, s.Options.Runtime, batch)
	if err != nil {
		return err
	}
	defer cl.Close()
	outs := map[*schema.ScoreOutputs]eval.Outputs{}
	outputs := func(split *data.Split, idx []int, dst *schema.ScoreOutputs) error {
		logits, err := cl.Logits(split, idx, nil)
		if err != nil {
			return err
		}
		labels := split.Labels(idx)
		outs[dst] = eval.Outputs{Logits: logits, Labels: labels, Classes: cl.Classes()}
		if dst.Margins, err = score.Margins(logits, cl.Classes(), labels); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		dst.Correct = make([]int, len(idx))
		for i, p := range infer.Argmax(logits, cl.Classes()) {
			if p == labels[i] {
				dst.Correct[i] = 1
			}
		}
		return nil
	}
	ds := s.Data
	if err := outputs(ds.Train, s.Forget, &res.Forget); err != nil {
		return err
	}
	if err := outputs(ds.Train, r.retain, &res.Retain); err != nil {
		return err
	}
	if err := outputs(ds.Test, r.test, &res.Test); err != nil {
		return err
	}
	// SalUn's SVC MIA per forget example: shadow members are the first
	// |test sample| retain examples, as SVC_MIA takes the first |test|.
	members := outs[&res.Retain].Subset(data.Range(min(len(r.retain), len(r.test))))
	res.Forget.SVCNonMember, err = eval.SVCNonMembers(members, outs[&res.Test], outs[&res.Forget], eval.Confidence,
		eval.MIAOptions{MEntropy: eval.MEntropySongMittal})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
