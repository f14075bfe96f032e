package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/unlearn"
)

func experimentCommand() *cli.Command {
	return &cli.Command{
		Name:      "experiment",
		Usage:     "the paper's comparison on your model and data: methods × budgets × seeds against retrained oracles",
		ArgsUsage: " ",
		Description: "Reads an experiment file (YAML, see README \"Experiments\"), then per seed trains the original\n" +
			"(or takes it), draws the forget sets, retrains an oracle without each, and runs every method at\n" +
			"every budget with the tool's own commands, each measured against its oracle. Every step is cached\n" +
			"under the file's out folder by its settings: an interrupted experiment resumes where it stopped.\n" +
			"Results are appended to <out>/results.jsonl, which is also the cache of record: a step with a\n" +
			"record there never runs again, even without <out>/runs/ (delete the line to rerun it). Times are\n" +
			"compared with the oracle's training time on the same machine. The table (mean ± 95 % CI over\n" +
			"seeds) goes to stdout and <out>/RESULTS.md, with plots beside it. --report-only rebuilds the\n" +
			"table from results.jsonl.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "config", Required: true, Usage: "experiment file (YAML)"},
			&cli.BoolFlag{Name: "report-only", Usage: "only rebuild RESULTS.md and the plots from results.jsonl"},
			&cli.BoolFlag{Name: "dry-run", Usage: "list the steps and whether they are cached, run nothing"},
		}, runtimeFlags()[:1]...),
		Action: runExperiment,
	}
}

// step runs one cached step of an experiment.
type expRunner struct {
	cfg    *experiment.Config
	self   string
	ortLib string
	dryRun bool
	// silent (with dryRun) plans the grid without saying anything: the
	// report's way to learn the keys of the config's steps.
	silent  bool
	results string
	// keys holds the keys of every oracle and run of the config, filled
	// by grid: the report shows only their records, so that records of
	// settings the config no longer has (a changed recipe, an older auto
	// rule) never mix into its rows.
	keys map[string]bool
	// done holds the records already in results.jsonl by key. They are the
	// cache of record: a step whose key has a record is not run again,
	// even where out/runs/ is gone (a fresh clone of a repository that
	// commits results.jsonl but not the models).
	done map[string]experiment.Record
	// machine is machineID() of this machine.
	machine string
}

// machineID names this machine's CPU for the records: model name, family
// and model from /proc/cpuinfo and the CPU count ("" where /proc/cpuinfo
// cannot be read). Two runs' seconds compare only under the same name.
func machineID() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" {
			break // the first processor's block
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
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
	return fmt.Sprintf("%s, %d CPUs", id, runtime.NumCPU())
}

func runExperiment(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %v", c.Args().Slice())
	}
	cfg, err := experiment.Load(c.String("config"))
	if err != nil {
		return err
	}
	r := &expRunner{cfg: cfg, ortLib: c.String("ort-lib"), dryRun: c.Bool("dry-run"), results: filepath.Join(cfg.Out, "results.jsonl")}
	if !c.Bool("report-only") {
		if r.self, err = os.Executable(); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(cfg.Out, "runs"), 0o755); err != nil {
			return err
		}
		if err := r.grid(); err != nil {
			return err
		}
		if r.dryRun {
			return nil
		}
	} else {
		r.dryRun, r.silent = true, true
		if err := r.grid(); err != nil {
			return fmt.Errorf("listing the config's steps: %w", err)
		}
	}
	return r.report(c)
}

// grid runs every step in a fixed order (with dryRun, lists them) and
// fills r.keys.
func (r *expRunner) grid() error {
	r.keys = map[string]bool{}
	r.done = map[string]experiment.Record{}
	if recs, err := experiment.ReadRecords(r.results); err == nil {
		for _, rec := range recs {
			r.done[rec.Key] = rec
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ctx, _ := signalContext()
	cfg := r.cfg
	r.machine = machineID()
	dataPath := cfg.Data
	if dataPath == "" {
		p, err := bundledData()
		if err != nil {
			return err
		}
		dataPath = p
	}
	ds, err := data.Open(dataPath, data.Options{})
	if err != nil {
		return err
	}
	labels := ds.Train.Labels(nil)
	dataSum, err := eval.HashPath(ds.Path)
	if err != nil {
		return err
	}
	base := cfg.Architecture
	if base == "" {
		base = cfg.Model
	}
	baseSum, err := eval.HashPath(base)
	if err != nil {
		return err
	}
	for _, seed := range cfg.Seeds {
		// The original is trained when the first run of its seed needs it:
		// a seed whose runs all have records needs no model at all.
		orig := cfg.Model
		var origDir string
		if orig == "" {
			key := experiment.Key("original", baseSum, dataSum, cfg.Train, seed)
			origDir = filepath.Join(cfg.Out, "runs", "original-"+key)
			orig = filepath.Join(origDir, "model.onnx")
		}
		origReady := origDir == ""
		needOrig := func() error {
			if origReady {
				return nil
			}
			if _, err := r.trainStep(ctx, origDir, fmt.Sprintf("original (seed %d)", seed), base, "", seed); err != nil {
				return err
			}
			origReady = true
			return nil
		}
		for _, fs := range cfg.ForgetSets {
			ids, err := experiment.ForgetIDs(fs, seed, labels)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# forget set %s (%s, fraction %g, classes %v), seed %d: %d ids\n", fs.Name, fs.Kind, fs.Fraction, fs.Classes, seed, len(ids))
			for _, id := range ids {
				b.WriteString(strconv.Itoa(id) + "\n")
			}
			idsPath := filepath.Join(cfg.Out, "runs", fmt.Sprintf("forget-%s-seed%d.txt", fs.Name, seed))
			if !r.dryRun {
				if err := outfile.WriteFile(idsPath, []byte(b.String())); err != nil {
					return err
				}
			}
			idsKey := experiment.Key(b.String())
			okey := experiment.Key("oracle", baseSum, dataSum, cfg.Train, seed, idsKey)
			r.keys[okey] = true
			odir := filepath.Join(cfg.Out, "runs", "oracle-"+okey)
			what := fmt.Sprintf("oracle %s (seed %d)", fs.Name, seed)
			if _, ok := r.done[okey]; ok {
				r.say(what, "cached (results.jsonl)")
			} else {
				oracleS, err := r.trainStep(ctx, odir, what, base, idsPath, seed)
				if err != nil {
					return err
				}
				if err := r.oracleRecord(ctx, odir, okey, fs, seed, filepath.Join(odir, "model.onnx"), idsPath, oracleS, len(ids)); err != nil {
					return err
				}
			}
			// A run's time is measured against the oracle's training time
			// on the same machine: an oracle recorded elsewhere (or before
			// records named their machine) is retrained here once, for its
			// time only; its metrics stay the record's.
			timedS, timed := 0.0, false
			oracleTime := func() (float64, error) {
				rec := r.done[okey]
				if r.machine == "" || rec.Machine == r.machine || r.dryRun && rec.Key == "" {
					return rec.Seconds, nil
				}
				if !timed {
					tdir := filepath.Join(cfg.Out, "runs", "oracle-time-"+experiment.Key(okey, r.machine))
					s, err := r.trainStep(ctx, tdir, fmt.Sprintf("oracle %s (seed %d), timed on this machine", fs.Name, seed), base, idsPath, seed)
					if err != nil {
						return 0, err
					}
					timedS, timed = s, true
				}
				return timedS, nil
			}
			origKey := experiment.Key(orig, seed)
			for _, m := range cfg.Methods {
				budgets := m.Budgets
				if len(budgets) == 0 {
					budgets = []float64{0}
				}
				for _, budget := range budgets {
					key := experiment.Key("run", m, budget, seed, idsKey, origKey, okey, cfg.NoMIA)
					if m.Schedule == unlearn.ScheduleAuto && unlearn.AutoVersion > 1 {
						key = experiment.Key(key, "auto", unlearn.AutoVersion)
					}
					if m.Default {
						key = experiment.Key(key, "default", unlearn.RecommendedString())
					}
					r.keys[key] = true
					if err := r.methodStep(ctx, key, m, budget, fs, seed, orig, needOrig, okey, oracleTime, idsPath, len(ids)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// exec runs the tool itself with args (JSON logs), returning its result
// event. The log events also stream into logPath as they come (unless it
// is empty), so that a long step can be watched (tail -f) and a failed one
// read afterwards. A signal to the experiment reaches the child as
// SIGTERM, so it cleans up.
func (r *expRunner) exec(ctx context.Context, what, logPath string, args ...string) (map[string]any, error) {
	full := append([]string{}, args...)
	// Not --quiet: the info events (epochs, progress at most once a
	// second) are what makes log.jsonl worth watching.
	full = append(full, "--log-format", "json")
	if r.cfg.Threads > 0 {
		full = append(full, "--threads", strconv.Itoa(r.cfg.Threads))
	}
	if r.cfg.Data != "" {
		full = append(full, "--data", r.cfg.Data)
	}
	if r.ortLib != "" {
		full = append(full, "--ort-lib", r.ortLib)
	}
	cmd := exec.Command(r.self, full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if logPath != "" {
		lf, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		defer lf.Close()
		cmd.Stderr = io.MultiWriter(&stderr, lf)
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	var result map[string]any
	var msg string
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			msg = sc.Text()
			continue
		}
		switch ev["event"] {
		case "result":
			result = ev
		case "error":
			msg, _ = ev["msg"].(string)
		}
	}
	if cmd.ProcessState.ExitCode() == exitInterrupted {
		return nil, errInterrupted
	}
	if err != nil {
		return nil, fmt.Errorf("%s: unlearn %s: %v: %s", what, strings.Join(args, " "), err, msg)
	}
	return result, nil
}

// trainStep trains base from scratch (without the ids in exclude, if set)
// into dir/model.onnx unless dir/done.json exists; it returns the training
// seconds.
func (r *expRunner) trainStep(ctx context.Context, dir, what, base, exclude string, seed uint64) (float64, error) {
	var done struct {
		TrainS float64 `json:"train_s"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "done.json")); err == nil && json.Unmarshal(b, &done) == nil {
		r.say(what, "cached")
		return done.TrainS, nil
	}
	if r.dryRun {
		r.say(what, "to run")
		return 0, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	t := r.cfg.Train
	args := []string{"train", "--model", base, "--from-scratch", "--out", filepath.Join(dir, "model.onnx"),
		"--epochs", strconv.Itoa(t.Epochs), "--lr", fmt.Sprint(t.LR), "--batch-size", strconv.Itoa(t.BatchSize),
		"--momentum", fmt.Sprint(t.Momentum), "--weight-decay", fmt.Sprint(t.WeightDecay), "--schedule", t.Schedule,
		"--seed", strconv.FormatUint(seed, 10)}
	if exclude != "" {
		args = append(args, "--exclude", exclude)
	}
	r.say(what, "training")
	start := time.Now()
	res, err := r.exec(ctx, what, filepath.Join(dir, "log.jsonl"), args...)
	if err != nil {
		return 0, err
	}
	done.TrainS, _ = res["train_s"].(float64)
	if done.TrainS == 0 {
		done.TrainS = time.Since(start).Seconds()
	}
	b, _ := json.Marshal(done)
	return done.TrainS, outfile.WriteFile(filepath.Join(dir, "done.json"), b)
}

// oracleRecord evaluates the oracle once (its own metrics; Δ is 0 by
// definition) and records it.
func (r *expRunner) oracleRecord(ctx context.Context, dir, key string, fs experiment.ForgetSet, seed uint64, oracle, ids string, trainS float64, n int) error {
	recPath := filepath.Join(dir, "record.json")
	if b, err := os.ReadFile(recPath); err == nil {
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
	metrics := filepath.Join(dir, "metrics.json")
	args := []string{"eval", "--model", oracle, "--forget", ids, "--json", metrics}
	if r.cfg.NoMIA {
		args = append(args, "--no-mia")
	}
	if _, err := r.exec(ctx, "oracle evaluation", filepath.Join(dir, "eval-log.jsonl"), args...); err != nil {
		return err
	}
	var doc struct {
		Accuracy map[string]float64 `json:"accuracy"`
		MIA      map[string]any     `json:"mia"`
	}
	if err := readJSON(metrics, &doc); err != nil {
		return err
	}
	rec := experiment.Record{Schema: experiment.RecordSchema, Key: key, Kind: "oracle", ForgetSet: fs.Name, Seed: seed,
		Name: "Retrain (oracle)", Accuracy: doc.Accuracy, MIA: numbers(doc.MIA), Delta: map[string]float64{},
		Seconds: trainS, OracleSeconds: trainS, Forget: n, Machine: r.machine}
	for k := range doc.Accuracy {
		rec.Delta[k] = 0
	}
	for k := range rec.MIA {
		rec.Delta["mia_"+k] = 0
	}
	return r.record(recPath, rec)
}

// methodStep runs one method at one budget (unless results.jsonl or its
// directory has its record), measured against the oracle record okey;
// needOrig makes sure the original model exists, oracleTime gives the
// oracle's training seconds on this machine.
func (r *expRunner) methodStep(ctx context.Context, key string, m experiment.Method, budget float64, fs experiment.ForgetSet, seed uint64,
	orig string, needOrig func() error, okey string, oracleTime func() (float64, error), ids string, n int) error {
	dir := filepath.Join(r.cfg.Out, "runs", "run-"+key)
	what := fmt.Sprintf("%s on %s (seed %d)", m.Name, fs.Name, seed)
	if budget > 0 {
		what = fmt.Sprintf("%s α=%g on %s (seed %d)", m.Name, budget, fs.Name, seed)
	}
	recPath := filepath.Join(dir, "record.json")
	if _, ok := r.done[key]; ok {
		r.say(what, "cached (results.jsonl)")
		return nil
	}
	if _, err := os.Stat(recPath); err == nil {
		r.say(what, "cached")
		return nil
	}
	if err := needOrig(); err != nil {
		return err
	}
	oracleS, err := oracleTime()
	if err != nil {
		return err
	}
	if r.dryRun {
		r.say(what, "to run")
		return nil
	}
	orec, ok := r.done[okey]
	if !ok {
		return fmt.Errorf("%s: no oracle record %s in %s", what, okey, r.results)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	metrics := filepath.Join(dir, "metrics.json")
	// The original and the oracle are evaluated once per seed and forget
	// set (the oracle by oracleRecord), not in every run; Δ is computed
	// here from the two metrics files, as eval.NewDelta does.
	args := []string{"--model", orig, "--forget", ids, "--no-before", "--out", filepath.Join(dir, "model.onnx"),
		"--metrics", metrics, "--seed", strconv.FormatUint(seed, 10)}
	if !m.Default { // a default row leaves every choice to the recommended default
		args = append(args, recipeArgs(m, budget)...)
	}
	if r.cfg.NoMIA {
		args = append(args, "--no-mia")
	}
	r.say(what, "running (log: "+filepath.Join(dir, "log.jsonl")+")")
	if _, err := r.exec(ctx, what, filepath.Join(dir, "log.jsonl"), args...); err != nil {
		return err
	}
	var doc struct {
		Accuracy   map[string]float64 `json:"accuracy"`
		MIA        map[string]any     `json:"mia"`
		Unlearning struct {
			Strategy, Algorithm string
			Budget              float64
			Timings             eval.UnlearningTimings
			Auto                *eval.AutoSchedule
		}
	}
	if err := readJSON(metrics, &doc); err != nil {
		return err
	}
	rec := experiment.Record{Schema: experiment.RecordSchema, Key: key, Kind: "run", ForgetSet: fs.Name, Seed: seed,
		Name: m.Name, Strategy: doc.Unlearning.Strategy, Algorithm: doc.Unlearning.Algorithm, Budget: budget,
		Accuracy: doc.Accuracy, MIA: numbers(doc.MIA), Delta: map[string]float64{},
		Seconds: doc.Unlearning.Timings.LocalizeS + doc.Unlearning.Timings.UnlearnS, OracleSeconds: oracleS, Forget: n,
		Machine: r.machine}
	if rec.OriginalSHA256, err = eval.HashPath(orig); err != nil {
		return err
	}
	if m.Default && doc.Unlearning.Strategy != "full" {
		rec.Budget = doc.Unlearning.Budget // the default's, for the α column
	}
	if a := doc.Unlearning.Auto; a != nil {
		rec.Schedule, rec.Epochs, rec.LR, rec.Stop = "auto", a.StopEpoch, a.LR, a.Reason
	}
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

// recipeArgs are the main command's flags for a method row at a budget (0:
// none). Every choice is explicit, the schedule too, so that a change of the
// tool's defaults never changes what a cached key means.
func recipeArgs(m experiment.Method, budget float64) []string {
	var args []string
	if m.Method != "" {
		args = append(args, "--method", m.Method)
	}
	if m.Strategy != "" {
		args = append(args, "--strategy", m.Strategy)
	}
	if m.Algorithm != "" {
		args = append(args, "--algorithm", m.Algorithm)
	}
	if budget > 0 {
		args = append(args, "--budget", fmt.Sprint(budget))
	}
	if m.Epochs > 0 {
		args = append(args, "--epochs", strconv.Itoa(m.Epochs))
	}
	if m.LR > 0 {
		args = append(args, "--lr", fmt.Sprint(m.LR))
	}
	if m.Schedule == unlearn.ScheduleAuto {
		args = append(args, "--schedule", unlearn.ScheduleAuto)
		if m.MaxEpochs > 0 {
			args = append(args, "--max-epochs", strconv.Itoa(m.MaxEpochs))
		}
	} else {
		args = append(args, "--schedule", unlearn.ScheduleFixed, "--proxies=false")
	}
	return append(args, m.Args...)
}

// record writes the step's record and appends it to results.jsonl.
func (r *expRunner) record(path string, rec experiment.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(r.results, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
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

func (r *expRunner) say(what, state string) {
	if r.silent {
		return
	}
	logs.info("experiment", fmt.Sprintf("%-48s %s", what, state), "step", what, "state", state)
}

func (r *expRunner) report(c *cli.Context) error {
	recs, err := experiment.ReadRecords(r.results)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no results yet; run the experiment first", r.results)
		}
		return err
	}
	if r.keys != nil {
		kept := recs[:0]
		for _, rec := range recs {
			if r.keys[rec.Key] {
				kept = append(kept, rec)
			}
		}
		recs = kept
	}
	rows := experiment.Summarize(recs)
	table := experiment.Markdown(rows) + experiment.RankingMarkdown(rows)
	names, files, err := experiment.Plots(rows)
	if err != nil {
		return err
	}
	var notes []byte
	if r.cfg.Notes != "" {
		if notes, err = os.ReadFile(r.cfg.Notes); err != nil {
			return fmt.Errorf("notes: %w", err)
		}
	}
	var md strings.Builder
	md.WriteString("<!-- generated by `unlearn experiment --report-only` from results.jsonl")
	if r.cfg.Notes != "" {
		fmt.Fprintf(&md, " and %s", r.cfg.Notes)
	}
	md.WriteString("; do not edit -->\n")
	if r.cfg.Title != "" {
		fmt.Fprintf(&md, "# %s\n\n", r.cfg.Title)
	}
	fmt.Fprintf(&md, "Reproduce: `unlearn experiment --config %s` runs the grid (resuming from its cache);\n", filepath.ToSlash(c.String("config")))
	fmt.Fprintf(&md, "`unlearn experiment --config %s --report-only` rebuilds this file and the plots from results.jsonl.\n\n", filepath.ToSlash(c.String("config")))
	md.WriteString("Values are percentage points, Δ = oracle − model, mean ± 95 % CI over seeds (Student's t);\n")
	md.WriteString("MIA is SalUn's SVC on the true label's confidence (share of the forget set called non-member);\n")
	md.WriteString("avg |Δ| = (|Δ forget| + |Δ MIA|)/2; time ÷ retrain = (localize + unlearn seconds) ÷ the oracle's\n")
	md.WriteString("training seconds on the same machine; ★ marks the localized method (strategy other than full) closest to the oracle.\n")
	md.WriteString(table)
	if len(names) > 0 {
		md.WriteString("\n")
		for _, n := range names {
			fmt.Fprintf(&md, "![%s](%s)\n", n, n)
		}
	}
	if len(notes) > 0 {
		md.WriteString("\n")
		md.Write(notes)
		if notes[len(notes)-1] != '\n' {
			md.WriteString("\n")
		}
	}
	files["RESULTS.md"] = []byte(md.String())
	out := map[string][]byte{}
	for n, b := range files {
		out[filepath.Join(r.cfg.Out, n)] = b
	}
	if err := outfile.WriteFiles(out); err != nil {
		return err
	}
	fmt.Fprint(c.App.Writer, table)
	fmt.Fprintf(c.App.Writer, "\nwrote %s and %d plots\n", filepath.Join(r.cfg.Out, "RESULTS.md"), len(names))
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
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
