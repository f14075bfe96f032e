package onnxio

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

const onnxTestData = "/usr/share/libonnx-testdata/data"

// conformanceModels lists the model.onnx files of the ONNX node tests
// (Debian libonnx-testdata), skipping the test when they are not installed.
func conformanceModels(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(onnxTestData, "*", "*", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skipf("no ONNX test models in %s (install libonnx-testdata)", onnxTestData)
	}
	return paths
}

func TestRoundTripConformance(t *testing.T) {
	paths := conformanceModels(t)
	var ok, subgraphs, initializers int
	okBySuite, bySuite := map[string]int{}, map[string]int{}
	for _, path := range paths {
		name, _ := filepath.Rel(onnxTestData, filepath.Dir(path))
		suite := filepath.Dir(name)
		bySuite[suite]++
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(data, want); err != nil {
			t.Errorf("%s: protobuf itself cannot parse it: %v", name, err)
			continue
		}
		m, err := Load(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := m.Graph.Validate(); err != nil {
			t.Errorf("%s: decoded graph is invalid: %v", name, err)
		}
		if hasSubgraph(m.Graph) {
			subgraphs++
		}
		initializers += len(m.Graph.Initializers)
		out, err := Encode(m)
		if err != nil {
			t.Errorf("%s: encode: %v", name, err)
			continue
		}
		got := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(out, got); err != nil {
			t.Errorf("%s: re-parse: %v", name, err)
			continue
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s: round trip changed the model", name)
			continue
		}
		ok++
		okBySuite[suite]++
	}
	suites := make([]string, 0, len(bySuite))
	for suite := range bySuite {
		suites = append(suites, suite)
	}
	sort.Strings(suites)
	for _, suite := range suites {
		t.Logf("%s: %d of %d round-trip unchanged", suite, okBySuite[suite], bySuite[suite])
	}
	t.Logf("%d of %d conformance models round-trip unchanged (%d with subgraphs, %d initializers in all)", ok, len(paths), subgraphs, initializers)
	if ok != len(paths) {
		t.Errorf("%d models failed", len(paths)-ok)
	}
}

func hasSubgraph(g *graph.Graph) bool {
	for _, n := range g.Nodes() {
		for _, a := range n.Attrs {
			if a.G != nil || len(a.Graphs) > 0 {
				return true
			}
		}
	}
	return false
}
