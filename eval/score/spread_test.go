package score

import (
	"fmt"
	"math"
	"testing"
)

// TestSpreadWithK is the study behind docs/SCORE.md: F over 12 independent
// ensembles of K unlearned and K retrained models, 25 forget examples each,
// whose two distributions are identical N(0, 1) (perfect unlearning) or
// 0.5 sd apart, beside the bootstrap interval of one ensemble. Run with -v
// to see the table. It checks that F separates the two cases once K ≥ 16.
func TestSpreadWithK(t *testing.T) {
	if testing.Short() {
		t.Skip("study")
	}
	t.Log("| K | shift | E | mean ε | F mean | F sd | bootstrap interval of one ensemble |")
	means := map[string]float64{}
	for _, k := range []int{4, 8, 16, 32, 64} {
		for _, shift := range []float64{0, 0.5} {
			var fs, es []float64
			for rep := range 12 {
				u, r := gaussEnsemble(uint64(100*k+rep), k, 25, shift)
				f, err := ForgetScore(u, r, 0)
				if err != nil {
					t.Fatal(err)
				}
				fs = append(fs, f.F)
				for _, e := range f.Examples {
					es = append(es, e.Value)
				}
			}
			u, r := gaussEnsemble(uint64(100*k), k, 25, shift)
			s, err := Summarize(Ensemble{Unlearned: u, Retrained: r}, BootstrapOptions{Resamples: 40, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			mf, sf := meanSD(fs)
			me, _ := meanSD(es)
			means[fmt.Sprint(k, shift)] = mf
			t.Logf("| %d | %.1f | %.0f | %.2f | %.3f | %.3f | %.3f [%.3f, %.3f] |", k, shift, MaxEpsilon(k), me, mf, sf, s.F.Estimate, s.F.Lo, s.F.Hi)
		}
	}
	for _, k := range []int{16, 32, 64} {
		if !(means[fmt.Sprint(k, 0.0)] > means[fmt.Sprint(k, 0.5)]) {
			t.Errorf("K=%d: F of identical distributions %v not above F of shifted ones %v", k, means[fmt.Sprint(k, 0.0)], means[fmt.Sprint(k, 0.5)])
		}
	}
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}
