package conformance

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

const suite = "/usr/share/libonnx-testdata/data/node"

// Tolerances of the ONNX backend test runner (onnx/backend/test/runner).
const (
	rtol = 1e-3
	atol = 1e-7
)

type result struct {
	status string // "pass", "fail", "skip"
	reason string
}

// runCase runs one model (serialized) on the recorded inputs and compares
// with the recorded outputs.
func runCase(model []byte, inputs, want []*graph.Tensor) result {
	ins, outs, err := onnxrt.ModelIO(model, onnxrt.Options{Threads: 1})
	if err != nil {
		return result{"skip", "onnxruntime rejects the model: " + firstLine(err)}
	}
	if len(inputs) > len(ins) {
		return result{"skip", fmt.Sprintf("%d recorded inputs for %d model inputs", len(inputs), len(ins))}
	}
	names := make([]string, len(inputs))
	for i := range inputs {
		names[i] = ins[i].Name
	}
	if len(want) > len(outs) {
		return result{"skip", fmt.Sprintf("%d recorded outputs for %d model outputs", len(want), len(outs))}
	}
	onames := make([]string, len(want))
	for i := range want {
		onames[i] = outs[i].Name
	}
	s, err := onnxrt.NewSession(model, names, onames, onnxrt.Options{Threads: 1})
	if err != nil {
		return result{"skip", "onnxruntime cannot create a session: " + firstLine(err)}
	}
	defer s.Close()
	in := make([]*onnxrt.Tensor, len(inputs))
	for i, t := range inputs {
		in[i], err = onnxrt.FromGraph(t)
		if err != nil {
			return result{"skip", "input not representable: " + firstLine(err)}
		}
		defer in[i].Close()
	}
	out := make([]*onnxrt.Tensor, len(want))
	if err := s.Run(in, out); err != nil {
		return result{"skip", "onnxruntime fails to run it: " + firstLine(err)}
	}
	for i, o := range out {
		defer o.Close()
		got, err := o.ToGraph(onames[i])
		if err != nil {
			return result{"fail", fmt.Sprintf("output %d: %v", i, err)}
		}
		if msg := compare(got, want[i]); msg != "" {
			return result{"fail", fmt.Sprintf("output %q: %s", onames[i], msg)}
		}
	}
	return result{"pass", ""}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func compare(got, want *graph.Tensor) string {
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return fmt.Sprintf("shape %v, want %v", got.Shape, want.Shape)
	}
	if got.DType != want.DType {
		return fmt.Sprintf("type %v, want %v", got.DType, want.DType)
	}
	switch want.DType {
	case graph.Float, graph.Double, graph.Float16:
		g, w := floats(got), floats(want)
		for i := range w {
			if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
				continue
			}
			if math.IsInf(w[i], 0) && g[i] == w[i] {
				continue
			}
			if !(math.Abs(g[i]-w[i]) <= atol+rtol*math.Abs(w[i])) {
				return fmt.Sprintf("element %d = %g, want %g", i, g[i], w[i])
			}
		}
		return ""
	case graph.String:
		for i := range want.Strings {
			if string(got.Strings[i]) != string(want.Strings[i]) {
				return fmt.Sprintf("element %d = %q, want %q", i, got.Strings[i], want.Strings[i])
			}
		}
		return ""
	}
	if string(got.Raw) != string(want.Raw) {
		return "data differs"
	}
	return ""
}

func floats(t *graph.Tensor) []float64 {
	n := int(t.Len())
	out := make([]float64, n)
	for i := 0; i < n; i++ {
		switch t.DType {
		case graph.Float:
			out[i] = float64(math.Float32frombits(le32(t.Raw[4*i:])))
		case graph.Double:
			out[i] = math.Float64frombits(uint64(le32(t.Raw[8*i:])) | uint64(le32(t.Raw[8*i+4:]))<<32)
		case graph.Float16:
			out[i] = half(uint16(t.Raw[2*i]) | uint16(t.Raw[2*i+1])<<8)
		}
	}
	return out
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * frac * math.Pow(2, -24)
	case 31:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

func readTensors(dir, prefix string) ([]*graph.Tensor, error) {
	var out []*graph.Tensor
	for i := 0; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		t, err := onnxio.ReadTensorFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// TestConformance: every case ONNX Runtime runs correctly from the original
// file must also run correctly after onnxio → graph → onnxio.
func TestConformance(t *testing.T) {
	if _, err := os.Stat(suite); err != nil {
		if os.Getenv("UNLEARN_REQUIRE_ORT") == "1" {
			t.Fatalf("libonnx-testdata missing (%v): `make deps` installs it", err)
		}
		t.Skipf("libonnx-testdata not installed: %v", err)
	}
	testutil.RequireORT(t)
	cases, err := filepath.Glob(filepath.Join(suite, "*", "model.onnx"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases under %s: %v", suite, err)
	}
	sort.Strings(cases)
	var base, ours = map[string]int{}, map[string]int{}
	skipReasons := map[string][]string{}
	var regressions []string
	for _, modelPath := range cases {
		dir := filepath.Dir(modelPath)
		name := filepath.Base(dir)
		orig, err := os.ReadFile(modelPath)
		if err != nil {
			t.Fatal(err)
		}
		sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
		if len(sets) == 0 {
			base["skip"]++
			ours["skip"]++
			skipReasons["no test data"] = append(skipReasons["no test data"], name)
			continue
		}
		// Our round trip: decode into the IR, validate, encode.
		m, err := onnxio.Decode(orig, dir)
		var rt []byte
		if err == nil {
			err = m.Graph.Validate()
		}
		if err == nil {
			rt, err = onnxio.Encode(m)
		}
		rb, ro := result{"pass", ""}, result{"pass", ""}
		for _, set := range sets {
			inputs, err1 := readTensors(set, "input")
			want, err2 := readTensors(set, "output")
			if err1 != nil || err2 != nil {
				rb = result{"skip", "recorded data is not a plain tensor (sequence or optional)"}
				ro = rb
				break
			}
			if r := runCase(orig, inputs, want); r.status != "pass" {
				rb = r
			}
			if err != nil {
				ro = result{"fail", "onnxio/graph: " + firstLine(err)}
			} else if r := runCase(rt, inputs, want); r.status != "pass" && ro.status == "pass" {
				ro = r
			}
		}
		base[rb.status]++
		if rb.status == "pass" {
			ours[ro.status]++
			if ro.status != "pass" {
				regressions = append(regressions, fmt.Sprintf("%s: %s", name, ro.reason))
			}
		} else {
			ours["skip"]++
			reason := rb.reason
			if rb.status == "fail" {
				reason = "onnxruntime's own result differs from the recorded output"
			}
			skipReasons[reason] = append(skipReasons[reason], name)
		}
	}
	summary := fmt.Sprintf("conformance: %d passed, %d failed, %d skipped (original files: %d passed, %d failed, %d skipped; %d cases)",
		ours["pass"], ours["fail"], ours["skip"], base["pass"], base["fail"], base["skip"], len(cases))
	var b strings.Builder
	b.WriteString(summary + "\n")
	keys := make([]string, 0, len(skipReasons))
	for k := range skipReasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "skipped %d: %s: %s\n", len(skipReasons[k]), k, strings.Join(skipReasons[k], " "))
	}
	for _, r := range regressions {
		fmt.Fprintf(&b, "FAILED %s\n", r)
	}
	t.Log(b.String())
	if dir := os.Getenv("UNLEARN_REPORT_DIR"); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, "conformance.txt"), []byte(b.String()), 0o644)
	}
	if len(regressions) > 0 {
		t.Errorf("%d cases pass from the original file but fail after our round trip", len(regressions))
	}
	if base["pass"] < 600 {
		t.Errorf("only %d cases ran from the original files; the suite or ONNX Runtime setup looks broken", base["pass"])
	}
}
