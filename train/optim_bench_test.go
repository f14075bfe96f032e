package train

import (
	"fmt"
	"testing"
)

// BenchmarkAdamStep: one Adam step over the same 11.2 M parameters.
func BenchmarkAdamStep(b *testing.B) {
	const n = 11_200_000
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			p := &Param{Name: "w", Data: make([]float32, n), Grad: make([]float32, n)}
			for i := range p.Data {
				p.Data[i] = float32(i%97) * 1e-3
				p.Grad[i] = float32(i%89) * 1e-4
			}
			o := &Adam{Threads: th}
			b.SetBytes(int64(n) * 4 * 6)
			for i := 0; i < b.N; i++ {
				if err := o.Step([]*Param{p}, 1e-3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSGDStep: one SGD step (momentum 0.9) over ResNet-18's 11.2 M
// parameters as one tensor, with and without weight decay and an element
// mask, on 1 and 2 goroutines. The update is memory-bound: it reads θ, the
// gradient and the momentum buffer and writes θ and the buffer (224 MB).
func BenchmarkSGDStep(b *testing.B) {
	const n = 11_200_000
	for _, c := range []struct {
		name string
		wd   float64
		mask bool
	}{{"plain", 0, false}, {"wd", 5e-4, false}, {"mask", 0, true}} {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				p := &Param{Name: "w", Data: make([]float32, n), Grad: make([]float32, n)}
				for i := range p.Data {
					p.Data[i] = float32(i%97) * 1e-3
					p.Grad[i] = float32(i%89) * 1e-4
				}
				if c.mask {
					p.Mask = make([]bool, n)
					for i := range p.Mask {
						p.Mask[i] = i%3 != 0
					}
				}
				o := &SGD{Momentum: 0.9, WeightDecay: c.wd, Threads: th}
				if err := o.Step([]*Param{p}, 0.01); err != nil { // allocates the buffer
					b.Fatal(err)
				}
				b.SetBytes(int64(n) * 4 * 5)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := o.Step([]*Param{p}, 0.01); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
