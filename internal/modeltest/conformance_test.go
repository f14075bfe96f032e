package modeltest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// libonnxTestdata is Debian's libonnx-testdata (ONNX's own test models).
const libonnxTestdata = "/usr/share/libonnx-testdata/data"

// TestConformanceModelsAnalyse runs Validate, untying and the neuron analysis
// on every model of ONNX's test suite: none may fail or break the partition.
// Models onnxio cannot load are skipped (that is onnxio's test to make).
func TestConformanceModelsAnalyse(t *testing.T) {
	if _, err := os.Stat(libonnxTestdata); err != nil {
		t.Skipf("%s not installed", libonnxTestdata)
	}
	var files []string
	_ = filepath.WalkDir(libonnxTestdata, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".onnx") {
			files = append(files, p)
		}
		return nil
	})
	loaded := 0
	for _, f := range files {
		m, err := onnxio.Load(f)
		if err != nil {
			continue
		}
		loaded++
		rel, _ := filepath.Rel(libonnxTestdata, f)
		g := m.Graph
		if err := g.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", rel, err)
			continue
		}
		if _, err := graph.UntieIdentityInitializers(g); err != nil {
			t.Errorf("%s: untie: %v", rel, err)
			continue
		}
		if err := g.Validate(); err != nil {
			t.Errorf("%s: Validate after untie: %v", rel, err)
			continue
		}
		nm, err := graph.Neurons(g)
		if err != nil {
			t.Errorf("%s: Neurons: %v", rel, err)
			continue
		}
		if err := nm.CheckPartition(); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	t.Logf("analysed %d of %d models", loaded, len(files))
}
