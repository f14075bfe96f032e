package experiment

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// RecordSchema tags every line of results.jsonl.
const RecordSchema = "unlearn.experiment/v1"

// MIAKey is the membership-inference score the table reports: SalUn's SVC
// on the true label's probability ("confidence"), the share of the forget
// set called non-member.
const MIAKey = "confidence"

// Record is one line of results.jsonl: an oracle or one unlearning run,
// measured against the oracle of its forget set and seed.
type Record struct {
	Schema    string  `json:"schema"`
	Key       string  `json:"key"`
	Kind      string  `json:"kind"` // "oracle" or "run"
	ForgetSet string  `json:"forget_set"`
	Seed      uint64  `json:"seed"`
	Name      string  `json:"name"`
	Strategy  string  `json:"strategy,omitempty"`
	Algorithm string  `json:"algorithm,omitempty"`
	Budget    float64 `json:"budget,omitempty"`
	// Accuracy and MIA of the model; Delta = oracle − model for each key of
	// both ("forget", "retain", "test", "train", "mia_<name>").
	Accuracy map[string]float64 `json:"accuracy"`
	MIA      map[string]float64 `json:"mia,omitempty"`
	Delta    map[string]float64 `json:"delta"`
	// Seconds is the run's localization + unlearning time, or the oracle's
	// training time; OracleSeconds the oracle's training time.
	Seconds       float64 `json:"seconds"`
	OracleSeconds float64 `json:"oracle_seconds"`
	// CommandSeconds is a run's whole time as the main command spends it
	// (metrics.json's unlearning.timings.total_s: the evaluations before
	// and after, the retraining estimate's timed steps, localization and
	// unlearning); absent in records from before it was kept.
	CommandSeconds float64 `json:"command_seconds,omitempty"`
	Forget         int     `json:"forget"`
	// Machine names the CPU the step ran on (machine's model name, family
	// and model, and its CPU count; empty in records from before it was
	// kept): a run's OracleSeconds always come from the same machine.
	Machine string `json:"machine,omitempty"`
	// OriginalSHA256 is the SHA-256 of the run's input model (the seed's
	// original), so that a retrained original is visible.
	OriginalSHA256 string `json:"original_sha256,omitempty"`
	// Schedule is "auto" for a run under the auto schedule (empty for a
	// fixed recipe); Epochs and LR are then the epochs it trained and the
	// rate it chose, Stop why it stopped.
	Schedule string  `json:"schedule,omitempty"`
	Epochs   int     `json:"epochs,omitempty"`
	LR       float64 `json:"lr,omitempty"`
	Stop     string  `json:"stop,omitempty"`
	// Flags are the kinds of the run's warnings about its own result
	// (schema.Flag) and Vouched whether its signals backed it
	// (schema.Unlearning.Vouched); absent in records from before they
	// were kept.
	Flags   []string `json:"flags,omitempty"`
	Vouched bool     `json:"vouched,omitempty"`
	// Estimate is the run's oracle estimate (schema.OracleEstimate):
	// "forget" and "test" accuracy.
	Estimate map[string]float64 `json:"estimate,omitempty"`
	// Tolerances are the verdict's stated tolerances
	// (schema.Unlearning.Tolerances): "forget" and "test", fractions;
	// absent where the run stated none (and in records from before).
	Tolerances map[string]float64 `json:"tolerances,omitempty"`
	// EpochsEquivalent is the run's cost in epochs over the retain set at
	// its own speed (schema.Unlearning.EpochsEquivalent).
	EpochsEquivalent float64 `json:"epochs_equivalent,omitempty"`
	// PeakRSSMiB is the run's peak resident memory (metrics.json's
	// timings.peak_rss_mib, measured from the step's start); absent in
	// records from before it was kept.
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
}

// ReadRecords reads one results file (RecordSet.Read), leaving out a last
// line cut short.
func ReadRecords(path string) ([]Record, error) {
	var s RecordSet
	err := s.Read(path)
	return s.Records, err
}

// latest keeps, for each key, the last record, at the place of the first.
func latest(recs []Record) []Record {
	byKey := map[string]int{}
	var out []Record
	for _, r := range recs {
		if i, ok := byKey[r.Key]; ok {
			out[i] = r
			continue
		}
		byKey[r.Key] = len(out)
		out = append(out, r)
	}
	return out
}

// Stat is a mean with the half-width of its 95 % confidence interval
// (Student's t with n−1 degrees of freedom; 0 for n = 1).
type Stat struct {
	Mean, CI float64
	N        int
}

// t975 holds Student's t quantile 0.975 for 1…30 degrees of freedom
// (standard tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
var t975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// NewStat summarizes xs.
func NewStat(xs []float64) Stat {
	s := Stat{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	if len(xs) < 2 {
		return s
	}
	var ss float64
	for _, x := range xs {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	t := 1.960
	if df := len(xs) - 1; df <= len(t975) {
		t = t975[df-1]
	}
	s.CI = t * sd / math.Sqrt(float64(len(xs)))
	return s
}

// Row is one method (at one budget) on one forget set, over seeds.
type Row struct {
	ForgetSet string
	Name      string
	Strategy  string
	Algorithm string
	Budget    float64
	Oracle    bool
	// Forget is the model's forget accuracy; DForget, DMIA, DTest are
	// oracle − model; Gap is (|DForget| + |DMIA|)/2 per seed; Time is the
	// run's seconds ÷ the oracle's training seconds, Command the run's
	// CommandSeconds ÷ the same (over the seeds whose records have it).
	Forget, DForget, DMIA, DTest, Gap, Time, Command Stat
	// PeakMiB is the largest peak resident memory of the row's runs, in
	// MiB (0 where the records do not have it).
	PeakMiB float64
	Best    bool // best localized method on this forget set
	// Gaps is avg |Δ| per seed, for comparisons paired over seeds.
	Gaps map[uint64]float64
	// PaperGaps is avg |Δ| per seed with the MIA feature of the paper's
	// main tables (correctness) in place of MIAKey's; seeds whose record
	// lacks it are left out. CorrectnessNotError lists the seeds whose
	// correctness Δ MIA is not −Δ forget (or is missing); on the others the SVC, given a
	// yes/no feature, called exactly the misclassified forget examples
	// non-members, so their PaperGaps is |Δ forget|.
	PaperGaps           map[uint64]float64
	CorrectnessNotError []uint64
	// Auto rows: Epochs are the epochs the auto schedule trained.
	Auto   bool
	Epochs Stat
}

// Localized reports whether the row's method changes a subset of the
// parameters (its strategy is not full).
func (r Row) Localized() bool { return !r.Oracle && r.Strategy != "" && r.Strategy != "full" }

// Summarize groups the records into rows: per forget set (in order of first
// appearance), the oracle first, then methods in order of first
// appearance, budgets ascending.
func Summarize(recs []Record) []Row {
	recs = latest(recs)
	type gk struct {
		fs, name string
		budget   float64
	}
	var order []gk
	groups := map[gk][]Record{}
	fsOrder := map[string]int{}
	nameOrder := map[string]int{}
	for _, r := range recs {
		if _, ok := fsOrder[r.ForgetSet]; !ok {
			fsOrder[r.ForgetSet] = len(fsOrder)
		}
		name := r.Name
		if r.Kind == "oracle" {
			name = ""
		}
		if _, ok := nameOrder[name]; !ok {
			nameOrder[name] = len(nameOrder)
		}
		k := gk{r.ForgetSet, name, r.Budget}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.fs != b.fs {
			return fsOrder[a.fs] < fsOrder[b.fs]
		}
		if (a.name == "") != (b.name == "") {
			return a.name == ""
		}
		if a.name != b.name {
			return nameOrder[a.name] < nameOrder[b.name]
		}
		return a.budget < b.budget
	})
	var rows []Row
	for _, k := range order {
		g := groups[k]
		sort.Slice(g, func(i, j int) bool { return g[i].Seed < g[j].Seed })
		r := Row{ForgetSet: k.fs, Name: g[0].Name, Strategy: g[0].Strategy, Algorithm: g[0].Algorithm, Budget: k.budget,
			Oracle: g[0].Kind == "oracle"}
		r.Auto = g[0].Schedule == "auto"
		var fo, df, dm, dt, gap, tm, cm, ep []float64
		r.Gaps, r.PaperGaps = map[uint64]float64{}, map[uint64]float64{}
		for _, rec := range g {
			if rec.Schedule == "auto" {
				ep = append(ep, float64(rec.Epochs))
			}
			fo = append(fo, rec.Accuracy["forget"])
			df = append(df, rec.Delta["forget"])
			dt = append(dt, rec.Delta["test"])
			m, ok := rec.Delta["mia_"+MIAKey]
			if ok {
				dm = append(dm, m)
			}
			gap = append(gap, (math.Abs(rec.Delta["forget"])+math.Abs(m))/2)
			r.Gaps[rec.Seed] = gap[len(gap)-1]
			c, ok := rec.Delta["mia_correctness"]
			if ok {
				r.PaperGaps[rec.Seed] = (math.Abs(rec.Delta["forget"]) + math.Abs(c)) / 2
			}
			if !ok || math.Abs(c+rec.Delta["forget"]) > 1e-9 {
				r.CorrectnessNotError = append(r.CorrectnessNotError, rec.Seed)
			}
			if rec.OracleSeconds > 0 {
				tm = append(tm, rec.Seconds/rec.OracleSeconds)
				if rec.CommandSeconds > 0 {
					cm = append(cm, rec.CommandSeconds/rec.OracleSeconds)
				}
			}
			r.PeakMiB = max(r.PeakMiB, rec.PeakRSSMiB)
		}
		r.Forget, r.DForget, r.DMIA, r.DTest = NewStat(fo), NewStat(df), NewStat(dm), NewStat(dt)
		r.Gap, r.Time, r.Command = NewStat(gap), NewStat(tm), NewStat(cm)
		if r.Auto {
			r.Epochs = NewStat(ep)
		}
		rows = append(rows, r)
	}
	// Mark the best localized method per forget set.
	best := map[string]int{}
	for i, r := range rows {
		if !r.Localized() {
			continue
		}
		if j, ok := best[r.ForgetSet]; !ok || r.Gap.Mean < rows[j].Gap.Mean {
			best[r.ForgetSet] = i
		}
	}
	for _, i := range best {
		rows[i].Best = true
	}
	return rows
}

func pts(s Stat) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmt.Sprintf("%+.2f", 100*s.Mean)
	}
	return fmt.Sprintf("%+.2f ± %.2f", 100*s.Mean, 100*s.CI)
}

func abs(s Stat) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmt.Sprintf("%.2f", 100*s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", 100*s.Mean, 100*s.CI)
}

// Markdown renders the rows as one table per forget set. Values are
// percentage points (Δ = oracle − model), mean ± 95 % CI over seeds; names
// go through MarkdownText.
func Markdown(rows []Row) string {
	var b strings.Builder
	fs := ""
	// A table gains a column of the whole command's time and one of the
	// runs' peak memory when its records have them (tables of older
	// records are as they were).
	memory, command := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		memory[r.ForgetSet] = memory[r.ForgetSet] || r.PeakMiB > 0
		command[r.ForgetSet] = command[r.ForgetSet] || r.Command.N > 0
	}
	for _, r := range rows {
		if r.ForgetSet != fs {
			fs = r.ForgetSet
			fmt.Fprintf(&b, "\n**Forget set %s**\n\n", MarkdownText(fs))
			head, rule := "| method | strategy + algorithm | α | forget acc | Δ forget | Δ MIA | Δ test | avg "+
				"\\|Δ\\| | time "+
				"÷ retrain", "|---|---|---|---|---|---|---|---|---"
			if command[fs] {
				head, rule = head+" | command ÷ retrain", rule+"|---"
			}
			if memory[fs] {
				head, rule = head+" | peak memory", rule+"|---"
			}
			fmt.Fprintf(&b, "%s | seeds |\n%s|---|\n", head, rule)
		}
		name, how, alpha := MarkdownText(r.Name), MarkdownText(r.Strategy)+" + "+MarkdownText(r.Algorithm), "–"
		if r.Oracle {
			name, how = "Retrain (oracle)", "train from scratch without the forget set"
		}
		if r.Budget > 0 {
			alpha = fmt.Sprintf("%g", r.Budget)
		}
		if r.Auto {
			how += fmt.Sprintf(", auto: %.1f epochs", r.Epochs.Mean)
		}
		if r.Best {
			name = "**" + name + "** ★"
		}
		tm := "1"
		if !r.Oracle {
			tm = "–"
			if r.Time.N > 0 {
				tm = fmt.Sprintf("%.3f", r.Time.Mean)
			}
		}
		if command[fs] {
			c := "–"
			if r.Oracle {
				c = "1"
			} else if r.Command.N > 0 {
				c = fmt.Sprintf("%.3f", r.Command.Mean)
			}
			tm += " | " + c
		}
		if memory[fs] {
			mem := "–"
			if r.PeakMiB > 0 {
				mem = fmt.Sprintf("%.1f GiB", r.PeakMiB/1024)
			}
			tm += " | " + mem
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n",
			name, how, alpha, abs(r.Forget), pts(r.DForget), pts(r.DMIA), pts(r.DTest), abs(r.Gap), tm, r.Forget.N)
	}
	return b.String()
}
