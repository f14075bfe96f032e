package experiment

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Rank is one method (at one budget) across every forget set of the table.
type Rank struct {
	Name     string
	Strategy string
	Budget   float64
	// Rows holds the method's row on each forget set, in the order of the
	// sets Ranking returns.
	Rows []Row
	// SetGaps holds, per forget set (same order), the avg |Δ| per seed the
	// ranking used.
	SetGaps []map[uint64]float64
	// Gap is the mean over the forget sets of each set's mean avg |Δ|.
	Gap float64
	// Seeds is the fewest seeds the method has on any forget set.
	Seeds int
}

// gapsOf picks the avg |Δ| per seed a ranking orders by.
type gapsOf func(Row) map[uint64]float64

func tableGaps(r Row) map[uint64]float64 { return r.Gaps }
func paperGaps(r Row) map[uint64]float64 { return r.PaperGaps }

// seedsOf lists a per-seed map's seeds in ascending order.
func seedsOf(m map[uint64]float64) []uint64 {
	seeds := make([]uint64, 0, len(m))
	for s := range m {
		seeds = append(seeds, s)
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	return seeds
}

// Label names the method with its budget, as the table does.
func (r Rank) Label() string {
	if r.Budget > 0 {
		return fmt.Sprintf("%s α %g", r.Name, r.Budget)
	}
	return r.Name
}

// Ranking orders the methods present on every forget set by their avg |Δ|
// (the paper's closeness to the oracle: (|Δ forget| + |Δ MIA|)/2) averaged
// over the forget sets, closest first; ties keep the table's order. The
// oracle is left out. sets are the forget sets in the table's order.
func Ranking(rows []Row) (sets []string, ranks []Rank) { return rankBy(rows, tableGaps) }

// rankBy is Ranking by the avg |Δ| per seed that gaps picks; a method
// without a seed on some forget set is left out.
func rankBy(rows []Row, gaps gapsOf) (sets []string, ranks []Rank) {
	type mk struct {
		name   string
		budget float64
	}
	seen := map[string]bool{}
	var order []mk
	byMethod := map[mk]map[string]Row{}
	for _, r := range rows {
		if !seen[r.ForgetSet] {
			seen[r.ForgetSet] = true
			sets = append(sets, r.ForgetSet)
		}
		if r.Oracle {
			continue
		}
		k := mk{r.Name, r.Budget}
		if byMethod[k] == nil {
			byMethod[k] = map[string]Row{}
			order = append(order, k)
		}
		byMethod[k][r.ForgetSet] = r
	}
	for _, k := range order {
		m := byMethod[k]
		if len(m) != len(sets) {
			continue
		}
		rk := Rank{Name: k.name, Budget: k.budget, Seeds: math.MaxInt}
		for _, fs := range sets {
			r := m[fs]
			g := gaps(r)
			var xs []float64
			for _, s := range seedsOf(g) {
				xs = append(xs, g[s])
			}
			rk.Rows = append(rk.Rows, r)
			rk.SetGaps = append(rk.SetGaps, g)
			rk.Strategy = r.Strategy
			rk.Gap += NewStat(xs).Mean / float64(len(sets))
			rk.Seeds = min(rk.Seeds, len(xs))
		}
		if rk.Seeds == 0 {
			continue
		}
		ranks = append(ranks, rk)
	}
	sort.SliceStable(ranks, func(i, j int) bool { return ranks[i].Gap < ranks[j].Gap })
	return sets, ranks
}

// PairedGap compares two rows of one forget set on the seeds both have:
// the mean of a's avg |Δ| − b's per seed, with its 95 % confidence
// interval (N is the number of shared seeds).
func PairedGap(a, b Row) Stat { return pairGaps(a.Gaps, b.Gaps) }

// pairGaps is PairedGap on two per-seed maps of avg |Δ|.
func pairGaps(a, b map[uint64]float64) Stat {
	var d []float64
	for _, s := range seedsOf(a) {
		if bs, ok := b[s]; ok {
			d = append(d, a[s]-bs)
		}
	}
	return NewStat(d)
}

// RankingMarkdown renders the ranking as a table and states, from the
// numbers alone, whether DEL (any row whose strategy is del, fixed or auto
// recipe) is closer to the oracle than the closest method of another
// strategy, per forget set, paired over the seeds both have. It returns ""
// when no method is present on every forget set.
func RankingMarkdown(rows []Row) string {
	sets, ranks := Ranking(rows)
	if len(ranks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n**Closest to the oracle**: every method present on all forget sets, ranked by avg |Δ| averaged " +
		"over the forget sets")
	b.WriteString(" (each set's mean over its seeds; a row with fewer seeds than the others is less certain than its " +
		"rank).\n\n")
	b.WriteString("| rank | method |")
	for _, fs := range sets {
		fmt.Fprintf(&b, " avg \\|Δ\\| %s |", MarkdownText(fs))
	}
	b.WriteString(" mean |")
	for _, fs := range sets {
		fmt.Fprintf(&b, " Δ test %s |", MarkdownText(fs))
	}
	b.WriteString(" time ÷ retrain | seeds |\n|---|---|")
	b.WriteString(strings.Repeat("---|", 2*len(sets)+3))
	b.WriteString("\n")
	for i, rk := range ranks {
		fmt.Fprintf(&b, "| %d | %s |", i+1, MarkdownText(rk.Label()))
		for _, r := range rk.Rows {
			fmt.Fprintf(&b, " %s |", abs(r.Gap))
		}
		fmt.Fprintf(&b, " %.2f |", 100*rk.Gap)
		var tm []float64
		for _, r := range rk.Rows {
			fmt.Fprintf(&b, " %s |", pts(r.DTest))
			if r.Time.N > 0 {
				tm = append(tm, r.Time.Mean)
			}
		}
		t := "–"
		if len(tm) > 0 {
			t = fmt.Sprintf("%.3f", NewStat(tm).Mean)
		}
		fmt.Fprintf(&b, " %s | %d |\n", t, rk.Seeds)
	}
	var said []string
	if c := compareDEL(sets, ranks, func(Row) bool { return true }); c != "" {
		said = append(said, c)
	}
	fixed := func(r Row) bool { return !r.Auto }
	if c := compareDEL(sets, ranks, fixed); c != "" {
		said = append(said, "Among the fixed recipes only (the paper's setting): "+c)
	}
	if _, pr := rankBy(rows, paperGaps); len(pr) > 0 {
		if c := compareDEL(sets, pr, fixed); c != "" {
			said = append(said, "With the MIA feature of the paper's main tables (correctness) in place of confidence, fixed "+
				"recipes only"+
				correctnessNote(rows)+": "+c)
		}
	}
	if len(said) > 0 {
		b.WriteString("\n" + strings.Join(said, "\n\n") + "\n")
	}
	return b.String()
}

// compareDEL compares DEL's closest row (any row whose strategy is del)
// among the ranks whose rows keep accepts with the closest row of another
// strategy, per forget set; "" when either is missing. Exact retraining
// (algorithm retrain) is a second oracle, not a method DEL competes with:
// it keeps its place in the ranks counted and is never the other row.
func compareDEL(sets []string, ranks []Rank, keep func(Row) bool) string {
	var kept []Rank
	for _, rk := range ranks {
		if keep(rk.Rows[0]) {
			kept = append(kept, rk)
		}
	}
	del, other := -1, -1
	for i, rk := range kept {
		if rk.Strategy == "del" && del < 0 {
			del = i
		}
		if rk.Strategy != "del" && rk.Rows[0].Algorithm != "retrain" && other < 0 {
			other = i
		}
	}
	if del < 0 || other < 0 {
		return ""
	}
	d, o := kept[del], kept[other]
	var b strings.Builder
	fmt.Fprintf(&b, "DEL's closest row, %s, ranks %d of %d (mean avg |Δ| %.2f); the closest method of another strategy, "+
		"%s, ranks %d (%.2f).",
		MarkdownText(d.Label()), del+1, len(kept), 100*d.Gap, MarkdownText(o.Label()), other+1, 100*o.Gap)
	b.WriteString(" Paired over the seeds both have, avg |Δ| of DEL's row − the other's:")
	for i, fs := range sets {
		p := pairGaps(d.SetGaps[i], o.SetGaps[i])
		sep := ";"
		if i == len(sets)-1 {
			sep = "."
		}
		fmt.Fprintf(&b, " %s %s (%s)%s", MarkdownText(fs), pts(p), pairVerdict(p), sep)
	}
	return b.String()
}

// correctnessNote says, when it holds for all runs but at most three,
// that the correctness SVC called exactly the misclassified forget examples
// non-members, so that the paper's avg |Δ| is |Δ forget|, naming the
// exceptions; "" otherwise.
func correctnessNote(rows []Row) string {
	var except []string
	for _, r := range rows {
		if r.Oracle {
			continue
		}
		name := Rank{Name: r.Name, Budget: r.Budget}.Label()
		for _, s := range r.CorrectnessNotError {
			except = append(except, fmt.Sprintf("%s on %s, seed %d", MarkdownText(name), MarkdownText(r.ForgetSet), s))
		}
	}
	switch {
	case len(except) == 0:
		return " (on every run here the SVC called exactly the misclassified forget examples non-members, so this avg |Δ| " +
			"is |Δ forget|)"
	case len(except) <= 3:
		return " (on every run here but " + strings.Join(except, "; ") +
			", the SVC called exactly the misclassified forget examples non-members, so there this avg |Δ| is |Δ forget|)"
	}
	return ""
}

// pairVerdict reads a paired difference (DEL − other): closer or farther
// when its 95 % interval excludes 0.
func pairVerdict(p Stat) string {
	switch {
	case p.N == 0:
		return "no shared seed"
	case p.N == 1:
		return "one seed, no interval"
	case p.Mean+p.CI < 0:
		return fmt.Sprintf("DEL closer, %d seeds", p.N)
	case p.Mean-p.CI > 0:
		return fmt.Sprintf("DEL farther, %d seeds", p.N)
	}
	return fmt.Sprintf("not distinguishable at 95 %%, %d seeds", p.N)
}
