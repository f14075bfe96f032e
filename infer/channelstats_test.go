package infer

import (
	"math"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// ChannelStats on a graph input made an output (its values are the data
// itself) equals the mean and biased variance computed here from the
// batches directly; a convolution's output has one entry per channel and a
// non-negative variance.
func TestChannelStats(t *testing.T) {
	testutil.RequireORT(t)
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnxio.Load(testutil.Testdata(t, "exports", "b_eval_dynamic.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	rt := onnxrt.Options{Threads: 2}
	if err := onnxrt.Setup(rt); err != nil {
		t.Fatal(err)
	}
	idx := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 35, 897, 93, 238, 462, 643, 383, 279, 502, 884, 197}
	mean, variance, err := ChannelStats(m, []string{"input", "/conv1/Conv_output_0"}, ds.Train, idx, rt, 7)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, len(idx)*28*28)
	if err := ds.Train.Batch(x, idx); err != nil {
		t.Fatal(err)
	}
	var s, sq float64
	for _, v := range x {
		s += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(len(x))
	wantMean, wantVar := s/n, sq/n-(s/n)*(s/n)
	if len(mean[0]) != 1 || math.Abs(mean[0][0]-wantMean) > 1e-9 || math.Abs(variance[0][0]-wantVar) > 1e-9 {
		t.Errorf("input: mean %v variance %v, want %v %v", mean[0], variance[0], wantMean, wantVar)
	}
	if len(mean[1]) != 8 || len(variance[1]) != 8 {
		t.Fatalf("conv1: %d means, %d variances; want 8", len(mean[1]), len(variance[1]))
	}
	for k, v := range variance[1] {
		if !(v >= 0) || math.IsNaN(mean[1][k]) {
			t.Errorf("conv1 channel %d: mean %v variance %v", k, mean[1][k], v)
		}
	}
	if _, _, err := ChannelStats(m, []string{"nope"}, ds.Train, idx, rt, 7); err == nil {
		t.Error("an unknown value was accepted")
	}
}
