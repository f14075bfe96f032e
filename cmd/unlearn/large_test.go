//go:build large

package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// TestLargeModel (make test-large; needs ~20 GB of free memory and ~7 GB of
// disk): a classifier whose first weight alone is 2.2 GB goes through
// external data (write, read, compare bit for bit), then the main command
// unlearns a slice of it (shallowest-rft, budget 0.05 %: the first 354 rows
// of the 2.2 GB weight; DEL's ranking puts a row of the classifier first,
// and one such row, 700,001 parameters, is over that budget, so DEL's mask
// would be empty and only the classifier would train) and the output, again with
// external data, is read back and audited.
func TestLargeModel(t *testing.T) {
	dir := t.TempDir()
	path := writeLargeModel(t, dir)
	// The test's own copies are garbage now: give the memory back before
	// the tool loads the model.
	runtime.GC()
	debug.FreeOSMemory()

	ids := writeFile(t, "ids.txt", []byte("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n"))
	out := filepath.Join(dir, "out", "u.onnx")
	os.Mkdir(filepath.Dir(out), 0o755)
	res := runCLI(t, "--model", path, "--data", "testdata/fashion", "--forget", ids, "--method", "shallowest-rft", "--budget", "0.0005", "--epochs", "1",
		"--batch-size", "64", "--no-mia", "--proxies=false", "--no-before", "--out", out, "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var doc struct {
		Unlearning struct {
			Audit struct {
				BitIdentical  bool  `json:"outside_mask_bit_identical"`
				ChangedParams int64 `json:"changed_params"`
				TotalParams   int64 `json:"total_params"`
			} `json:"audit"`
		} `json:"unlearning"`
	}
	b, _ := os.ReadFile(strings.TrimSuffix(out, ".onnx") + ".metrics.json")
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	a := doc.Unlearning.Audit
	// rft trains the classifier (fc2: 10·k + 10) whole and the masked
	// rows of fc1 (budget 0.05 %; at most 1 % of its k·785 parameters).
	if !a.BitIdentical || a.ChangedParams == 0 || a.ChangedParams > 10*k+10+k*785/100 {
		t.Fatalf("audit %+v", a)
	}
	u, err := onnxio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	// Rows of fc1.weight outside the mask are bit-identical to the input's.
	in, err := onnxio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	wi, wu := in.Graph.LocalValue("fc1.weight").Init.Raw, u.Graph.LocalValue("fc1.weight").Init.Raw
	changedRows := 0
	for row := 0; row < k; row++ {
		a, b := wi[row*784*4:(row+1)*784*4], wu[row*784*4:(row+1)*784*4]
		if string(a) != string(b) {
			changedRows++
		}
	}
	if changedRows == 0 || changedRows > k/100 {
		t.Fatalf("%d of %d rows of fc1.weight changed", changedRows, k)
	}
	f := math.Float32frombits(binary.LittleEndian.Uint32(wu))
	t.Logf("%d rows of fc1.weight changed; %d of %d parameters; first value %g", changedRows, a.ChangedParams, a.TotalParams, f)
}

// k is the hidden width of the large model: W1 is k×784 float32 = 2.195 GB.
const k = 700_000

// writeLargeModel writes the large classifier to dir/large.onnx (external
// data), reads it back and checks W1 bit for bit; nothing of it stays
// referenced when it returns.
func writeLargeModel(t *testing.T, dir string) string {
	g := graph.NewGraph("large")
	x, _ := g.AddInput("input", &graph.Type{DType: graph.Float, Shape: []graph.Dim{{Param: "N"}, {Size: 1}, {Size: 28}, {Size: 28}}})
	fill := func(n int, scale float32, seed uint64) []float32 {
		v := make([]float32, n)
		s := seed
		for i := range v {
			s = s*6364136223846793005 + 1442695040888963407
			v[i] = scale * (float32(s>>40)/float32(1<<24) - 0.5)
		}
		return v
	}
	w1, _ := g.AddInitializer(graph.NewFloat32("fc1.weight", []int64{k, 784}, fill(k*784, 0.07, 1)))
	b1, _ := g.AddInitializer(graph.NewFloat32("fc1.bias", []int64{k}, fill(k, 0.07, 2)))
	w2, _ := g.AddInitializer(graph.NewFloat32("fc2.weight", []int64{10, k}, fill(10*k, 0.002, 3)))
	b2, _ := g.AddInitializer(graph.NewFloat32("fc2.bias", []int64{10}, make([]float32, 10)))
	fl, _ := g.AddNode("Flatten", "", "flatten", []*graph.Value{x}, []string{"flat"})
	h, _ := g.AddNode("Gemm", "", "fc1", []*graph.Value{fl.Output(0), w1, b1}, []string{"h"})
	h.Attrs = append(h.Attrs, &graph.Attribute{Name: "transB", Type: graph.AttrInt, I: 1})
	r, _ := g.AddNode("Relu", "", "relu", []*graph.Value{h.Output(0)}, []string{"hr"})
	o, _ := g.AddNode("Gemm", "", "fc2", []*graph.Value{r.Output(0), w2, b2}, []string{"logits"})
	o.Attrs = append(o.Attrs, &graph.Attribute{Name: "transB", Type: graph.AttrInt, I: 1})
	g.Outputs = []*graph.Value{o.Output(0)}
	m := &graph.Model{Graph: g, IRVersion: 8, Opsets: []graph.OpsetImport{{Version: 17}}}
	sum := sha256.Sum256(w1.Init.Raw)
	path := filepath.Join(dir, "large.onnx")
	if err := onnxio.Save(m, path, nil); err != nil { // over 2 GB: external data by itself
		t.Fatal(err)
	}
	m = nil
	size := int64(0)
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if info, err := f.Info(); err == nil && f.Name() != "large.onnx" {
			size += info.Size()
		}
	}
	if size < 2<<30 {
		t.Fatalf("external data files hold %d bytes", size)
	}
	back, err := onnxio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256.Sum256(back.Graph.LocalValue("fc1.weight").Init.Raw); got != sum {
		t.Fatal("fc1.weight changed in the round trip through external data")
	}
	back = nil
	return path
}
