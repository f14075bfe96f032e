package testutil

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// LibPath returns the ONNX Runtime library the tests load: "" when
// ONNXRUNTIME_LIB is set (onnxrt reads it; `make test` sets it), else the
// repository's .ort/libonnxruntime.so.1 from `make ort`, found from this
// source file, when it exists. onnxrt does not search the working directory,
// and test binaries do not sit in bin/ beside the repository's .ort/, so a
// plain `go test ./...` needs this to find the library.
func LibPath() string {
	if os.Getenv("ONNXRUNTIME_LIB") != "" {
		return ""
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	p := filepath.Join(filepath.Dir(file), "..", "..", ".ort", onnxrt.LibName)
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return ""
	}
	return p
}

// ExportLibPath sets ONNXRUNTIME_LIB to LibPath() when it is unset, so that
// processes the tests start (the unlearn binary) find the library too. For
// TestMain, before m.Run.
func ExportLibPath() error {
	if p := LibPath(); p != "" {
		return os.Setenv("ONNXRUNTIME_LIB", p)
	}
	return nil
}

// RequireORT loads ONNX Runtime or skips the test when the library is absent.
// With UNLEARN_REQUIRE_ORT=1 (set by `make test` and CI) an absent library
// fails the test instead, so CI cannot pass by skipping.
func RequireORT(t testing.TB) {
	t.Helper()
	if err := onnxrt.Setup(onnxrt.Options{LibPath: LibPath(), Threads: 2}); err != nil {
		if os.Getenv("UNLEARN_REQUIRE_ORT") == "1" {
			t.Fatalf("ONNX Runtime required: %v", err)
		}
		t.Skipf("ONNX Runtime not available: %v", err)
	}
}

// RepoRoot returns the repository root (the folder holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate testutil source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Testdata returns the path of a file under testdata/.
func Testdata(t testing.TB, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{RepoRoot(t), "testdata"}, parts...)...)
}

// CloseAbsRel reports whether got is within abs or rel·|want| of want.
func CloseAbsRel(got, want, abs, rel float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return false
	}
	d := math.Abs(got - want)
	return d <= abs || d <= rel*math.Abs(want)
}

// MaxRelErr returns max|a−b| / max(max|b|, tiny): the relative error of a
// tensor as a whole, the measure the parity tests state their tolerances in.
func MaxRelErr(a, b []float32) float64 {
	var maxDiff, maxRef float64
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if d > maxDiff || math.IsNaN(d) {
			maxDiff = d
		}
		if r := math.Abs(float64(b[i])); r > maxRef {
			maxRef = r
		}
	}
	if maxRef < 1e-30 {
		maxRef = 1e-30
	}
	return maxDiff / maxRef
}

// Demo opens the bundled data (testdata/fashion) and splits its training
// examples by the demo's non-IID forget set: the inputs most tests unlearn.
func Demo(t testing.TB) (ds *data.Dataset, forget, retain []int) {
	t.Helper()
	ds, err := data.Open(Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := data.ReadIDs(Testdata(t, "demo", "forget_nonIID.txt"), ds.Train.Len())
	if err != nil {
		t.Fatal(err)
	}
	forget, retain = data.ForgetRetain(ds.Train.Len(), ids)
	return ds, forget, retain
}
