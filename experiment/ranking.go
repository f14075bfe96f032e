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
	// Gap is the mean over the forget sets of each set's mean avg |Δ|.
	Gap float64
	// Seeds is the fewest seeds the method has on any forget set.
	Seeds int
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
func Ranking(rows []Row) (sets []string, ranks []Rank) {
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
			rk.Rows = append(rk.Rows, r)
			rk.Strategy = r.Strategy
			rk.Gap += r.Gap.Mean / float64(len(sets))
			rk.Seeds = min(rk.Seeds, r.Gap.N)
		}
		ranks = append(ranks, rk)
	}
	sort.SliceStable(ranks, func(i, j int) bool { return ranks[i].Gap < ranks[j].Gap })
	return sets, ranks
}

// PairedGap compares two rows of one forget set on the seeds both have:
// the mean of a's avg |Δ| − b's per seed, with its 95 % confidence
// interval (N is the number of shared seeds).
func PairedGap(a, b Row) Stat {
	var seeds []uint64
	for s := range a.Gaps {
		if _, ok := b.Gaps[s]; ok {
			seeds = append(seeds, s)
		}
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	d := make([]float64, len(seeds))
	for i, s := range seeds {
		d[i] = a.Gaps[s] - b.Gaps[s]
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
	b.WriteString("\n**Closest to the oracle**: every method present on all forget sets, ranked by avg |Δ| averaged over the forget sets")
	b.WriteString(" (each set's mean over its seeds; a row with fewer seeds than the others is less certain than its rank).\n\n")
	b.WriteString("| rank | method |")
	for _, fs := range sets {
		fmt.Fprintf(&b, " avg \\|Δ\\| %s |", fs)
	}
	b.WriteString(" mean |")
	for _, fs := range sets {
		fmt.Fprintf(&b, " Δ test %s |", fs)
	}
	b.WriteString(" time ÷ retrain | seeds |\n|---|---|")
	b.WriteString(strings.Repeat("---|", 2*len(sets)+3))
	b.WriteString("\n")
	for i, rk := range ranks {
		fmt.Fprintf(&b, "| %d | %s |", i+1, rk.Label())
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
	if c := compareDEL(sets, ranks, func(r Row) bool { return !r.Auto }); c != "" {
		said = append(said, "Among the fixed recipes only (the paper's setting): "+c)
	}
	if len(said) > 0 {
		b.WriteString("\n" + strings.Join(said, " ") + "\n")
	}
	return b.String()
}

// compareDEL compares DEL's closest row (any row whose strategy is del)
// among the ranks whose rows keep accepts with the closest row of another
// strategy, per forget set; "" when either is missing.
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
		if rk.Strategy != "del" && other < 0 {
			other = i
		}
	}
	if del < 0 || other < 0 {
		return ""
	}
	d, o := kept[del], kept[other]
	var b strings.Builder
	fmt.Fprintf(&b, "DEL's closest row, %s, ranks %d of %d (mean avg |Δ| %.2f); the closest method of another strategy, %s, ranks %d (%.2f).",
		d.Label(), del+1, len(kept), 100*d.Gap, o.Label(), other+1, 100*o.Gap)
	b.WriteString(" Paired over the seeds both have, avg |Δ| of DEL's row − the other's:")
	for i, fs := range sets {
		p := PairedGap(d.Rows[i], o.Rows[i])
		sep := ";"
		if i == len(sets)-1 {
			sep = "."
		}
		fmt.Fprintf(&b, " %s %s (%s)%s", fs, pts(p), pairVerdict(p), sep)
	}
	return b.String()
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
