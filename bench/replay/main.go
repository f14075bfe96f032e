// Command replay answers "where would this auto run have stopped with
// another utility tolerance?" from the run's own files, without training
// again. An auto run's trajectory does not depend on its stopping rule's
// tolerances: each epoch's rate comes from the cap (MaxEpochs) and the
// chosen rate alone, so the proxies after each epoch (metrics.json,
// unlearning.proxies.epochs) are what any tolerance would have seen up to
// where it stops, and autorule.Config.Decide, the rule itself, replays on
// them. A wider tolerance can only stop at or before the run's last epoch,
// which is all the replay can see: a narrower one that would train on is
// reported as "beyond the run".
//
//	go run ./bench/replay -tol 0.005,0.01,0.015 regimes/resnet18/runs/run-c4f1ba3c842f2fa9
//
// Each argument is a run folder of `unlearn experiment` (metrics.json and
// record.json: the oracle's accuracies are the record's accuracy plus its
// Δ, and its training seconds the record's oracle_seconds) or a
// metrics.json of `unlearn --oracle` (the oracle's accuracies from its
// "oracle" section; no time ratio). Replaying at the run's own tolerance
// must give back its recorded stop, or the file is refused: a run of
// another rule version, or settings other than the default patience and
// minimum epochs, does not replay.
//
// Times: the unlearning's seconds to the replayed stop are the run's
// unlearn_s less the training and proxy seconds of the epochs after it;
// time ÷ retrain is that plus the localization, over the oracle's
// training seconds, as RESULTS.md computes it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// run is what the replay reads of one run.
type run struct {
	Path string
	Auto schema.AutoSchedule
	// Epochs are the proxies after each epoch, with their seconds;
	// TrainSeconds the training seconds of each epoch.
	Epochs       []schema.EpochProxies
	TrainSeconds []float64
	LocalizeS    float64
	UnlearnS     float64
	// Flagged says that the run raised a flag that does not depend on
	// where it stopped (estimate-bias, forget-resolution): such a run is
	// not vouched for whatever the tolerance.
	Flagged bool
	// NTest is the size of the test split (metrics.json's counts; 0 when
	// absent).
	NTest int
	// OracleForget and OracleTest are the oracle's accuracies (NaN when
	// unknown), OracleSeconds its training (0: unknown).
	OracleForget, OracleTest, OracleSeconds float64
}

// outcome is the replayed run at one utility tolerance.
type outcome struct {
	Tol            float64
	Decision       schema.ProxyDecision
	StopEpoch      int  // the last epoch trained
	Stopped        bool // false: the rule would have trained past the run's last epoch
	Forget, Test   float64
	DForget, DTest float64 // oracle − model; NaN without the oracle
	Seconds, Ratio float64 // unlearning seconds to the stop; ÷ the oracle's training (NaN: unknown)
}

func main() {
	tols := flag.String("tol", "0.005,0.0075,0.01,0.015,1se,1.5se",
		"utility tolerances to replay, comma-separated: fractions (0.01 = 1 point), "+
			"or Kse: K standard errors of an accuracy at the utility target measured on the run's test split, at least 0.005")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: replay [-tol T1,T2,...] RUN_DIR_OR_METRICS.json...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var ts []tolerance
	for _, s := range strings.Split(*tols, ",") {
		t, err := parseTolerance(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "replay: -tol: %v\n", err)
			os.Exit(2)
		}
		ts = append(ts, t)
	}
	failed := false
	sums := make([]summary, len(ts))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\tutility tol\tstop\tresult epoch\treason\tforget %\ttest %\t"+
		"Δ forget\tΔ test\tunlearn s\t÷ retrain\t")
	for _, p := range flag.Args() {
		r, err := load(p)
		if err == nil {
			err = r.check()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "replay: %v\n", err)
			failed = true
			continue
		}
		for i, ts := range ts {
			t := ts.of(r)
			o := r.replay(t)
			sums[i].add(r, o)
			stop, reason := strconv.Itoa(o.StopEpoch), o.Decision.Reason
			if !o.Stopped {
				stop, reason = "beyond the run", "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%.2f\t%.2f\t%s\t%s\t%.0f\t%s\t\n",
				filepath.Base(r.Path), ts.label(t), stop, o.Decision.Epoch, reason,
				100*o.Forget, 100*o.Test, signed(o.DForget), signed(o.DTest), o.Seconds, ratio(o.Ratio))
		}
	}
	w.Flush()
	if sums[0].runs > 1 {
		fmt.Println()
		w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "utility tol\truns\tbeyond the run\twith oracle\tmissed\t"+
			"missed, rule met, unflagged\tmean ÷ retrain\t")
		for i, t := range ts {
			s := sums[i]
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", t.spec, s.runs, s.beyond, s.withOracle, s.missed,
				s.vouchedMiss, ratio(s.ratio/float64(s.timed)))
		}
		w.Flush()
		fmt.Println("missed: more than 1 point from the oracle's forget or test accuracy; " +
			"unflagged: without the flags that do not depend")
		fmt.Println("on the stop (estimate-bias, forget-resolution); test-drop and proxies-disagree are not replayed.")
	}
	if failed {
		os.Exit(1)
	}
}

// tolerance is a utility tolerance to replay: a fixed fraction, or se
// standard errors of an accuracy at the run's utility target measured on
// its test split (sqrt(p(1−p)/n)), at least the rule's 0.005.
type tolerance struct {
	spec      string
	fixed, se float64
}

func parseTolerance(s string) (tolerance, error) {
	s = strings.TrimSpace(s)
	t := tolerance{spec: s}
	if k, ok := strings.CutSuffix(s, "se"); ok {
		v, err := strconv.ParseFloat(k, 64)
		if err != nil || !(v > 0 && v < 100) {
			return t, fmt.Errorf("%q: K in Kse must be a number in (0, 100)", s)
		}
		t.se = v
		return t, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v < 1) {
		return t, fmt.Errorf("%q: a fraction in [0, 1) or Kse", s)
	}
	t.fixed = v
	return t, nil
}

// of is the tolerance for run r.
func (t tolerance) of(r *run) float64 {
	if t.se == 0 {
		return t.fixed
	}
	p := r.Auto.UtilityTarget
	if r.NTest <= 0 || !(p > 0 && p < 1) {
		return 0.005
	}
	return max(0.005, t.se*math.Sqrt(p*(1-p)/float64(r.NTest)))
}

// label writes the tolerance as given, with its value when it is derived.
func (t tolerance) label(v float64) string {
	if t.se == 0 {
		return t.spec
	}
	return fmt.Sprintf("%s = %.4f", t.spec, v)
}

// summary counts one tolerance's outcomes over the runs replayed.
type summary struct {
	runs, beyond, withOracle, missed, vouchedMiss, timed int
	ratio                                                float64
}

func (s *summary) add(r *run, o outcome) {
	s.runs++
	if !o.Stopped {
		s.beyond++
		return
	}
	if !math.IsNaN(o.Ratio) {
		s.timed++
		s.ratio += o.Ratio
	}
	if math.IsNaN(o.DForget) || math.IsNaN(o.DTest) {
		return
	}
	s.withOracle++
	if math.Abs(o.DForget) > 0.01+1e-9 || math.Abs(o.DTest) > 0.01+1e-9 {
		s.missed++
		if o.Decision.Reason == autorule.StopUnseen && !r.Flagged {
			s.vouchedMiss++
		}
	}
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.2f", 100*v)
}

func ratio(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// maxFile bounds what replay reads (a run's metrics.json with its mask
// summary is about 100 KB).
const maxFile = 64 << 20

// load reads a run folder or a metrics.json.
func load(path string) (*run, error) {
	metrics, record := path, ""
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		metrics, record = filepath.Join(path, "metrics.json"), filepath.Join(path, "record.json")
	}
	b, err := fsread.File(metrics, "metrics", maxFile)
	if err != nil {
		return nil, err
	}
	var m schema.Report
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", metrics, err)
	}
	u := m.Unlearning
	if u == nil || u.Auto == nil || u.Proxies == nil || u.Log == nil {
		return nil, fmt.Errorf("%s: not a run of the auto schedule (no unlearning.auto, proxies or log)", metrics)
	}
	r := &run{Path: path, Auto: *u.Auto, Epochs: u.Proxies.Epochs, OracleForget: math.NaN(), OracleTest: math.NaN(),
		LocalizeS: u.Timings.LocalizeS, UnlearnS: u.Timings.UnlearnS}
	if m.Metrics != nil {
		r.NTest = m.Counts.Test
	}
	for _, f := range u.Flags {
		r.Flagged = r.Flagged || f.Kind == schema.FlagEstimateBias || f.Kind == schema.FlagForgetResolution
	}
	for _, e := range u.Log.Epochs {
		r.TrainSeconds = append(r.TrainSeconds, e.Seconds)
	}
	if o := m.Oracle; o != nil && o.Metrics != nil {
		r.OracleTest = o.Accuracy.Test
		if o.Accuracy.Forget != nil {
			r.OracleForget = *o.Accuracy.Forget
		}
	}
	if record == "" {
		return r, nil
	}
	b, err = fsread.File(record, "record", maxFile)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	var rec experiment.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %v", record, err)
	}
	if err := rec.Check(); err != nil {
		return nil, fmt.Errorf("%s: %v", record, err)
	}
	r.OracleForget = acc(rec.Accuracy, "forget") + acc(rec.Delta, "forget")
	r.OracleTest = acc(rec.Accuracy, "test") + acc(rec.Delta, "test")
	r.OracleSeconds = rec.OracleSeconds
	return r, nil
}

func acc(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// rule is the stopping rule the run applied, at utility tolerance tol.
func (r *run) rule(tol float64) (autorule.Config, autorule.Targets) {
	a := r.Auto
	c := autorule.Config{MaxEpochs: a.MaxEpochs, MinEpochs: 1, Patience: 3,
		ForgetTolerance: a.ForgetTolerance, UtilityTolerance: tol,
		UtilityBaseline: a.UtilityBaseline, ForgetBaseline: a.ForgetBaseline}
	t := autorule.Targets{Utility: a.UtilityTarget, ForgetFixed: a.ForgetFixed}
	if a.ForgetCeiling != nil {
		t.Forget, t.ForgetSet = *a.ForgetCeiling, true
	}
	return c, t
}

// check replays the run at its own tolerance and refuses it unless that
// gives back the recorded stop.
func (r *run) check() error {
	a := r.Auto
	if a.StopEpoch < 1 || len(r.Epochs) != a.StopEpoch || len(r.TrainSeconds) != a.StopEpoch {
		return fmt.Errorf("%s: %d proxy epochs and %d trained for a stop after epoch %d",
			r.Path, len(r.Epochs), len(r.TrainSeconds), a.StopEpoch)
	}
	o := r.replay(a.UtilityTolerance)
	if !o.Stopped || o.Decision.Epoch != a.Epoch || o.Decision.Reason != a.Reason {
		return fmt.Errorf("%s: replayed at its own tolerance %g it gives epoch %d (%s), "+
			"the run recorded epoch %d (%s): another rule version or settings",
			r.Path, a.UtilityTolerance, o.Decision.Epoch, o.Decision.Reason, a.Epoch, a.Reason)
	}
	return nil
}

// replay applies the rule at tolerance tol after each recorded epoch.
func (r *run) replay(tol float64) outcome {
	c, t := r.rule(tol)
	o := outcome{Tol: tol, DForget: math.NaN(), DTest: math.NaN(), Ratio: math.NaN()}
	hist := make([]schema.Proxies, 0, len(r.Epochs))
	stop := len(r.Epochs)
	for i, e := range r.Epochs {
		hist = append(hist, e.Proxies)
		if d := c.Decide(t, hist); d.Stop {
			o.Decision, o.Stopped, stop = d, true, i+1
			o.StopEpoch = stop
			break
		}
	}
	if !o.Stopped {
		o.Decision = schema.ProxyDecision{Epoch: c.BestEpoch(t, hist)}
	}
	p := r.Epochs[o.Decision.Epoch-1].Proxies
	o.Forget, o.Test = p.ForgetAccuracy, p.TestAccuracy
	o.DForget, o.DTest = r.OracleForget-o.Forget, r.OracleTest-o.Test
	o.Seconds = r.UnlearnS
	for i := stop; i < len(r.Epochs); i++ {
		o.Seconds -= r.TrainSeconds[i] + r.Epochs[i].Seconds
	}
	if r.OracleSeconds > 0 {
		o.Ratio = (r.LocalizeS + o.Seconds) / r.OracleSeconds
	}
	return o
}
