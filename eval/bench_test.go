package eval

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchOutputs makes n examples of 10 classes whose true-class margin is
// drawn from N(mu, 1.5), like a model's logits.
func benchOutputs(rng *rand.Rand, n int, mu float64) Outputs {
	o := Outputs{Logits: make([]float32, 10*n), Labels: make([]int, n), Classes: 10}
	for i := range n {
		y := i % 10
		o.Labels[i] = y
		for j := range 10 {
			o.Logits[10*i+j] = float32(rng.NormFloat64())
		}
		o.Logits[10*i+y] += float32(mu + 1.5*rng.NormFloat64())
	}
	return o
}

// BenchmarkMIA runs every attack with n shadow members, n shadow
// non-members and n/2 forget examples: n = 1000 is the bundled demo's
// size, n = 10000 CIFAR-10's (SalUn's setting: 10,000 test examples, so
// 20,000 SVC training points per feature).
func BenchmarkMIA(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			in, out, tgt := benchOutputs(rng, n, 5), benchOutputs(rng, n, 3), benchOutputs(rng, n/2, 4.5)
			for b.Loop() {
				if _, err := MIA(in, out, tgt, MIAOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
