package experiment

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// MissPoints is how far (in points) a result may lie from its oracle's
// forget and test accuracy before the verdict table calls it a miss: the
// 1 point of issue 30's acceptance.
const MissPoints = 1.0

// Verdict is one run of the verdict table: how far it landed from its
// oracle and whether it flagged itself.
type Verdict struct {
	ForgetSet      string
	Seed           uint64
	Name           string
	DForget, DTest float64 // oracle − model, points
	Miss           bool    // |DForget| or |DTest| above MissPoints, or above TolForget or TolTest
	// TolForget and TolTest are the run's stated tolerances in points (NaN
	// where it stated none): a run that states them is judged at them.
	TolForget, TolTest   float64
	Flags                []string
	Vouched              bool
	Stop                 string
	EstForget, EstTest   float64 // the run's oracle estimate − the oracle, points; NaN without one
	Epochs               int
	EpochsEquivalent     float64
	OracleForget, Forget float64 // accuracies, points
	// Time and Command are the run's localize + unlearn seconds and its
	// whole command's seconds ÷ its oracle's training seconds on the same
	// machine; NaN when the run was not timed (or, for Command, predates
	// the command's time being kept).
	Time, Command float64
}

// Verdicts lists the runs of the named rows (the default's, usually) with
// their distance from the oracle and their own flags, in forget-set, seed
// and name order.
func Verdicts(recs []Record, names []string) []Verdict {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	oracle := map[string]Record{}
	for _, r := range recs {
		if r.Kind == "oracle" {
			oracle[fmt.Sprintf("%s/%d", r.ForgetSet, r.Seed)] = r
		}
	}
	var out []Verdict
	for _, r := range recs {
		if r.Kind != "run" || !want[r.Name] {
			continue
		}
		v := Verdict{ForgetSet: r.ForgetSet, Seed: r.Seed, Name: r.Name, DForget: 100 * r.Delta["forget"],
			DTest: 100 * r.Delta["test"], Flags: r.Flags, Vouched: r.Vouched, Stop: r.Stop, Epochs: r.Epochs,
			EpochsEquivalent: r.EpochsEquivalent, Forget: 100 * r.Accuracy["forget"], EstForget: math.NaN(),
			EstTest: math.NaN(), Time: math.NaN(), Command: math.NaN(), TolForget: math.NaN(), TolTest: math.NaN()}
		if r.OracleSeconds > 0 {
			v.Time = r.Seconds / r.OracleSeconds
			if r.CommandSeconds > 0 {
				v.Command = r.CommandSeconds / r.OracleSeconds
			}
		}
		tf, tt := MissPoints, MissPoints
		if t := r.Tolerances; t != nil {
			v.TolForget, v.TolTest = 100*t["forget"], 100*t["test"]
			tf, tt = v.TolForget, v.TolTest
		}
		v.Miss = math.Abs(v.DForget) > tf+1e-9 || math.Abs(v.DTest) > tt+1e-9
		if o, ok := oracle[fmt.Sprintf("%s/%d", r.ForgetSet, r.Seed)]; ok {
			v.OracleForget = 100 * o.Accuracy["forget"]
			if r.Estimate != nil {
				v.EstForget = 100 * (r.Estimate["forget"] - o.Accuracy["forget"])
				v.EstTest = 100 * (r.Estimate["test"] - o.Accuracy["test"])
			}
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.ForgetSet != b.ForgetSet {
			return a.ForgetSet < b.ForgetSet
		}
		if a.Seed != b.Seed {
			return a.Seed < b.Seed
		}
		return a.Name < b.Name
	})
	return out
}

// VerdictMarkdown is the table of flag against miss for every run of the
// named rows, with a count of the runs that missed without a flag (the
// ones a user would have trusted wrongly).
func VerdictMarkdown(recs []Record, names []string) string {
	vs := Verdicts(recs, names)
	if len(vs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**Flag against miss** (%s): every run, Δ = oracle − model in points; a miss is |Δ "+
		"forget| or |Δ "+
		"test| above %g point; ", MarkdownText(strings.Join(names, ", ")), MissPoints)
	stated := slices.ContainsFunc(vs, func(v Verdict) bool { return !math.IsNaN(v.TolForget) })
	if stated {
		b.WriteString("a run that states tolerances (metrics.json `unlearning.tolerances`, shown beside its miss " +
			"as ±forget/test) is judged at them instead; ")
	}
	b.WriteString("flags are the run's own warnings (metrics.json `unlearning.flags`); vouched means the auto rule was " +
		"met with no flag; ")
	b.WriteString("estimate − oracle is the run's oracle-free estimate of the oracle's forget and test " +
		"accuracy against " +
		"the oracle's; ")
	b.WriteString("time and command ÷ retrain are the run's, as in the tables above (– where the run was not timed " +
		"against its oracle).\n\n")
	b.WriteString("| forget set | seed | method | Δ forget | Δ test | miss | flags | vouched | stop | epochs | " +
		"epochs-equivalent | estimate − oracle: forget | test | time ÷ retrain | command ÷ retrain |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var missed, flaggedMiss, unflaggedMiss, flaggedHit int
	for _, v := range vs {
		flags := "–"
		if len(v.Flags) > 0 {
			flags = MarkdownText(strings.Join(v.Flags, ", "))
		}
		miss, vouched := "no", "no"
		if v.Miss {
			miss = "**yes**"
			missed++
			if v.Vouched {
				unflaggedMiss++
			} else {
				flaggedMiss++
			}
		} else if !v.Vouched {
			flaggedHit++
		}
		if v.Vouched {
			vouched = "yes"
		}
		if !math.IsNaN(v.TolForget) {
			miss += fmt.Sprintf(" (±%.1f/%.1f)", v.TolForget, v.TolTest)
		}
		est := func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return fmt.Sprintf("%+.2f", x)
		}
		ee := "–"
		if v.EpochsEquivalent > 0 {
			ee = fmt.Sprintf("%.1f", v.EpochsEquivalent)
		}
		stop := MarkdownText(v.Stop)
		if stop == "" {
			stop = "–"
		}
		ratio := func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return fmt.Sprintf("%.3f", x)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %+.2f | %+.2f | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n",
			MarkdownText(v.ForgetSet), v.Seed, MarkdownText(v.Name), v.DForget, v.DTest, miss, flags, vouched, stop, v.Epochs,
			ee, est(v.EstForget), est(v.EstTest), ratio(v.Time), ratio(v.Command))
	}
	within := fmt.Sprintf("%g point", MissPoints)
	if stated {
		within = "their tolerances (1 point where none is stated)"
	}
	fmt.Fprintf(&b, "\n%d runs: %d missed (%d flagged, **%d vouched for although they missed**); %d not vouched for "+
		"although within %s.\n",
		len(vs), missed, flaggedMiss, unflaggedMiss, flaggedHit, within)
	return b.String()
}
