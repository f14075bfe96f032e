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
	m := &graph.Model{Metadata: map[string]string{data.MetaMean: "0.5", data.MetaStd: "0.25"}}
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
	bad := &graph.Model{Metadata: map[string]string{data.MetaMean: "0.5", data.MetaStd: "0"}}
	if _, err := open(data.Options{}).NormalizationFromModel(bad, "m.onnx"); err == nil || !strings.Contains(err.Error(), data.MetaStd) || !strings.Contains(err.Error(), "m.onnx") {
		t.Errorf("std 0 in metadata: %v", err)
	}
	out := &graph.Model{}
	s.RecordNormalization(out)
	if out.Metadata[data.MetaMean] != "0.1" || out.Metadata[data.MetaStd] != "0.3" {
		t.Errorf("recorded %v", out.Metadata)
	}
	none := &graph.Model{}
	open(data.Options{}).RecordNormalization(none)
	if none.Metadata != nil {
		t.Errorf("recorded without normalization: %v", none.Metadata)
	}
}

// TestNormalizationMetadataRefusals (issue 45 item 11): a huge metadata
// value is refused by its length, quoted short, before it is parsed or
// printed; a std that would blow normalized pixels up (1e-45) is refused
// naming the metadata, before any work; a mean of the wrong length on
// 1-channel data says so in plain words.
func TestNormalizationMetadataRefusals(t *testing.T) {
	open := func(opts data.Options) (*Suite, error) {
		ds, err := data.Open(testutil.Testdata(t, "fashion"), opts)
		return &Suite{Data: ds}, err
	}
	s, _ := open(data.Options{})
	huge := &graph.Model{Metadata: map[string]string{data.MetaMean: strings.Repeat("0.5,", 50<<20/4), data.MetaStd: "0.25"}}
	_, err := s.NormalizationFromModel(huge, "m.onnx")
	if err == nil || !strings.Contains(err.Error(), "metadata "+data.MetaMean+" is 52428800 bytes") || len(err.Error()) > 400 {
		t.Errorf("50 MB mean: %.500v", err)
	}
	tiny := &graph.Model{Metadata: map[string]string{data.MetaMean: "0.5", data.MetaStd: "1e-45"}}
	s, _ = open(data.Options{})
	_, err = s.NormalizationFromModel(tiny, "m.onnx")
	if err == nil || !strings.Contains(err.Error(), "m.onnx: metadata "+data.MetaMean+", "+data.MetaStd) || !strings.Contains(err.Error(), "as large as") {
		t.Errorf("std 1e-45: %v", err)
	}
	if _, err := open(data.Options{Mean: []float32{0.5}, Std: []float32{1e-30}}); err == nil || !strings.Contains(err.Error(), "std[0] = 1e-30") {
		t.Errorf("--std 1e-30: %v", err)
	}
	if _, err := open(data.Options{Mean: []float32{0.1, 0.2}}); err == nil || !strings.Contains(err.Error(), "the images have 1 channel (give 1 value)") {
		t.Errorf("--mean 0.1,0.2 on 1 channel: %v", err)
	}
	// Ordinary values pass, with room: ImageNet's and a 0–255 scale's.
	for _, o := range []data.Options{{Mean: []float32{0.485}, Std: []float32{0.229}}, {Mean: []float32{0.5}, Std: []float32{1e-3}}} {
		if _, err := open(o); err != nil {
			t.Errorf("%v: %v", o, err)
		}
	}
}

// TestNormalizationFromModels: files scored together (a comparison, a
// model and its oracle) take the normalization from the first that records
// one, files without the metadata share it, and two files recording
// different ones are refused naming both, unless it is given explicitly.
func TestNormalizationFromModels(t *testing.T) {
	open := func(opts data.Options) *Suite {
		ds, err := data.Open(testutil.Testdata(t, "fashion"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return &Suite{Data: ds}
	}
	rec := func(mean, std string) *graph.Model {
		return &graph.Model{Metadata: map[string]string{data.MetaMean: mean, data.MetaStd: std}}
	}
	paths := []string{"oracle.onnx", "a.onnx", "b.onnx"}
	s := open(data.Options{})
	if err := s.NormalizationFromModels([]*graph.Model{{}, rec("0.5", "0.25"), rec("0.5", "0.25")}, paths); err != nil ||
		!slices.Equal(s.Data.Mean, []float32{0.5}) || !slices.Equal(s.Data.Std, []float32{0.25}) {
		t.Fatalf("agreeing metadata: %v, mean %v std %v", err, s.Data.Mean, s.Data.Std)
	}
	err := open(data.Options{}).NormalizationFromModels([]*graph.Model{rec("0.5", "0.25"), {}, rec("0.5", "0.3")}, paths)
	if err == nil || !strings.Contains(err.Error(), "oracle.onnx and b.onnx") || !strings.Contains(err.Error(), "mean") {
		t.Errorf("different normalizations: %v", err)
	}
	s = open(data.Options{Mean: []float32{0.1}, Std: []float32{0.3}})
	if err := s.NormalizationFromModels([]*graph.Model{rec("0.5", "0.25"), rec("0.2", "0.3")}, paths[:2]); err != nil || s.Data.Mean[0] != 0.1 {
		t.Errorf("explicit normalization: %v, mean %v", err, s.Data.Mean)
	}
	s = open(data.Options{})
	if err := s.NormalizationFromModels([]*graph.Model{{}, {}}, paths[:2]); err != nil || s.Data.Mean != nil {
		t.Errorf("no metadata: %v, mean %v", err, s.Data.Mean)
	}
}
