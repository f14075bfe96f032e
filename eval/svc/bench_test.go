package svc

import (
	"strings"
	"testing"
)

// BenchmarkFit fits every parity fixture once per iteration (sub-benchmark
// per fixture); bench/svc_vs_sklearn.sh compares these times with
// scikit-learn's.
func BenchmarkFit(b *testing.B) {
	for _, meta := range loadManifest(b) {
		benchFit(b, meta)
	}
}

// BenchmarkFit20k fits the fixtures with 20,000 training points.
func BenchmarkFit20k(b *testing.B) {
	for _, meta := range loadManifest(b) {
		if strings.HasSuffix(meta.Name, "_20000") {
			benchFit(b, meta)
		}
	}
}

func benchFit(b *testing.B, meta fixtureMeta) {
	b.Run(meta.Name, func(b *testing.B) {
		fx := loadFixture(b, meta)
		for b.Loop() {
			if _, err := FitFlat(fx.xTrain, fx.NTrain, fx.D, fx.yTrain, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
