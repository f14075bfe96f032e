package modeltest_test

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// models returns testdata/*.onnx plus *.onnx in $UNLEARN_MODEL_DIR if set.
func models(t *testing.T) []string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate test source")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "testdata", "*.onnx"))
	if dir := os.Getenv("UNLEARN_MODEL_DIR"); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
		files = append(files, more...)
	}
	sort.Strings(files)
	return files
}

// TestRealModelsAnalysis loads every model, checks Validate, untying, the
// partition invariant, that running statistics are no parameters and that
// the classifier is the final Linear (the last Gemm/MatMul layer).
func TestRealModelsAnalysis(t *testing.T) {
	files := models(t)
	if len(files) == 0 {
		t.Skip("no ONNX models in testdata/ (set UNLEARN_MODEL_DIR to use others)")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".onnx"), func(t *testing.T) {
			m, err := onnxio.Load(f)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			g := m.Graph
			if err := g.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			before, err := graph.Neurons(g)
			if err != nil {
				t.Fatalf("Neurons before untie: %v", err)
			}
			if err := before.CheckPartition(); err != nil {
				t.Fatalf("partition before untie: %v", err)
			}
			n, err := graph.UntieIdentityInitializers(g)
			if err != nil {
				t.Fatalf("untie: %v", err)
			}
			if err := g.Validate(); err != nil {
				t.Fatalf("Validate after untie: %v", err)
			}
			nm, err := graph.Neurons(g)
			if err != nil {
				t.Fatalf("Neurons: %v", err)
			}
			if err := nm.CheckPartition(); err != nil {
				t.Fatalf("partition: %v", err)
			}
			for _, nd := range g.Nodes() {
				if nd.OpType != "BatchNormalization" {
					continue
				}
				for i := 3; i <= 4; i++ {
					if l, _ := nm.LayerOf(graph.ParamSource(nd.Input(i))); l != nil {
						t.Errorf("%v: running statistic %q is a parameter", nd, nd.Input(i).Name)
					}
				}
			}
			var last *graph.Layer
			for _, l := range nm.Layers {
				if !l.Standalone && (l.Op.OpType == "Gemm" || l.Op.OpType == "MatMul") {
					last = l
				}
			}
			cls, err := nm.Classifier("")
			if err != nil {
				t.Fatalf("Classifier: %v", err)
			}
			if cls != last {
				t.Errorf("classifier %q, want the final Linear %v", cls.Name, last)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".onnx")
			for prefix, want := range knownCounts {
				if strings.HasPrefix(name, prefix) && (nm.NumParams != want.params || len(nm.Layers) != want.layers) {
					t.Errorf("%d parameters in %d layers, PyTorch has %d in %d", nm.NumParams, len(nm.Layers), want.params, want.layers)
				}
			}
			t.Logf("untied %d; %d parameters in %d tensors, %d layers, %d neurons, max depth %d, classifier %q",
				n, nm.NumParams, len(nm.Params), len(nm.Layers), len(nm.Neurons), nm.MaxDepth, cls.Name)
			if testing.Verbose() {
				for _, l := range nm.Layers {
					var ms []string
					for _, mb := range l.Members {
						ms = append(ms, mb.Param.Name+"@"+itoa(mb.Axis)+"("+mb.Role+")")
					}
					sa := ""
					if l.Standalone {
						sa = "*"
					}
					t.Logf("  d=%d %s%s ch=%d: %s", l.Depth, l.Op.OpType, sa, l.Channels, strings.Join(ms, " "))
				}
			}
		})
	}
}

// knownCounts are PyTorch's parameter counts (sum of numel over
// model.parameters(), of the BN-folded twin for the fused export) and the
// expected number of layers for the models testdata/make_testdata.py writes,
// by file name prefix.
var knownCounts = map[string]struct {
	params int64
	layers int
}{
	"resnet_small_fused": {77418, 10},
	"resnet_small_train": {77754, 10},
	"vgg_small":          {86266, 11},
	"vit_small":          {72074, 19},
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
