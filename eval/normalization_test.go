package eval

import (
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// TestNormalizationFromModel: a model's metadata (unlearn.mean,
// unlearn.std) sets the normalization when none was given, explicit values
// win, bad metadata is an error naming the key, and RecordNormalization
// writes what the suite uses back into a model.
func TestNormalizationFromModel(t *testing.T) {
	open := func(opts data.Options) *Suite {
		ds, err := data.Open(testutil.Testdata(t, "fashion"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return &Suite{Data: ds}
	}
	m := &graph.Model{Metadata: map[string]string{MetaMean: "0.5", MetaStd: "0.25"}}
	s := open(data.Options{})
	if ok, err := s.NormalizationFromModel(m, "m.onnx"); !ok || err != nil || !slices.Equal(s.Data.Mean, []float32{0.5}) || !slices.Equal(s.Data.Std, []float32{0.25}) {
		t.Fatalf("from metadata: %v %v, mean %v std %v", ok, err, s.Data.Mean, s.Data.Std)
	}
	// The splits normalize with it from then on: pixel 0 becomes (0-0.5)/0.25.
	x := make([]float32, 28*28)
	if err := s.Data.Train.Batch(x, []int{0}); err != nil {
		t.Fatal(err)
	}
	if lo := slices.Min(x); lo != -2 {
		t.Errorf("smallest normalized value %v, want -2", lo)
	}
	s = open(data.Options{Mean: []float32{0.1}, Std: []float32{0.3}})
	if ok, _ := s.NormalizationFromModel(m, "m.onnx"); ok || s.Data.Mean[0] != 0.1 {
		t.Errorf("explicit normalization lost to the metadata: mean %v", s.Data.Mean)
	}
	bad := &graph.Model{Metadata: map[string]string{MetaMean: "0.5", MetaStd: "0"}}
	if _, err := open(data.Options{}).NormalizationFromModel(bad, "m.onnx"); err == nil || !strings.Contains(err.Error(), MetaStd) || !strings.Contains(err.Error(), "m.onnx") {
		t.Errorf("std 0 in metadata: %v", err)
	}
	out := &graph.Model{}
	s.RecordNormalization(out)
	if out.Metadata[MetaMean] != "0.1" || out.Metadata[MetaStd] != "0.3" {
		t.Errorf("recorded %v", out.Metadata)
	}
	none := &graph.Model{}
	open(data.Options{}).RecordNormalization(none)
	if none.Metadata != nil {
		t.Errorf("recorded without normalization: %v", none.Metadata)
	}
}
