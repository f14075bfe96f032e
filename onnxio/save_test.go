package onnxio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// dirNames lists the entries of dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	for _, n := range dirNames(t, dir) {
		if strings.Contains(n, ".tmp-") {
			t.Errorf("temporary file %s left in %s", n, dir)
		}
	}
}

func sameFloats(t *testing.T, a, b *graph.Model, names ...string) {
	t.Helper()
	for _, name := range names {
		x, err := a.Graph.Value(name).Init.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Graph.Value(name).Init.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		if !bitsEqual(x, y) {
			t.Errorf("%s differs", name)
		}
	}
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	m := mlp(t, 64, 32, 2) // W: 8192 bytes, B: 128 bytes
	path := filepath.Join(dir, "model.onnx")
	if err := Save(m, path, &SaveOptions{ExternalData: true}); err != nil {
		t.Fatal(err)
	}
	noTempFiles(t, dir)
	st, err := os.Stat(path + ".data")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 64*32*4 {
		t.Errorf("data file has %d bytes, want W's %d", st.Size(), 64*32*4)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mp := unmarshalModel(t, raw)
	for _, tp := range mp.Graph.Initializer {
		ext := tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL
		if ext != (tp.GetName() == "W") || (ext && tp.RawData != nil) {
			t.Errorf("%s: external %v, raw_data %d bytes", tp.GetName(), ext, len(tp.RawData))
		}
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, m, back, "W", "B")

	// Loaded from external data, saved without: inline, same values.
	inline := filepath.Join(dir, "inline.onnx")
	if err := Save(back, inline, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inline + ".data"); !os.IsNotExist(err) {
		t.Errorf("inline save wrote a data file: %v", err)
	}
	back2, err := Load(inline)
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, m, back2, "W", "B")

	// Custom location and threshold: both tensors go out.
	if err := Save(m, filepath.Join(dir, "custom.onnx"), &SaveOptions{ExternalData: true, Location: "weights.bin", SizeThreshold: 16}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "weights.bin")); err != nil || st.Size() != (64*32+32)*4 {
		t.Fatalf("weights.bin: %v %v", st, err)
	}
	back3, err := Load(filepath.Join(dir, "custom.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, m, back3, "W", "B")

	// Short data file.
	if err := os.Truncate(path+".data", 100); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	checkErr(t, err, ErrExternalData, `"W"`, path+".data", "too short")

	// Missing data file.
	if err := os.Remove(path + ".data"); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	checkErr(t, err, ErrExternalData, `"W"`, "model.onnx.data")

	// Decode without a folder cannot resolve external data.
	_, err = Decode(raw, "")
	checkErr(t, err, ErrExternalData, `"W"`)
}

func checkErr(t *testing.T, err, want error, msgs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Errorf("error %q is not %v", err, want)
	}
	for _, s := range msgs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
}

func TestExternalDataOutsideFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret.bin")
	if err := os.WriteFile(secret, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"../secret.bin", secret, "sub/../../secret.bin", "link.bin"} {
		mp := modelProto(&onnxpb.GraphProto{
			Node: []*onnxpb.NodeProto{node("Identity", "id", []string{"w"}, []string{"y"})},
			Initializer: []*onnxpb.TensorProto{{
				Name: proto.String("w"), DataType: proto.Int32(int32(graph.Float)), Dims: []int64{4},
				DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
				ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(loc)}},
			}},
			Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 4)},
		})
		path := filepath.Join(dir, "m.onnx")
		if err := os.WriteFile(path, mustMarshal(t, mp), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		checkErr(t, err, ErrExternalData, `"w"`, "outside the model folder")
	}
}

func TestSaveProtect(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.onnx")
	if err := Save(mlp(t, 64, 32, 3), src, &SaveOptions{ExternalData: true}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(src)
	m, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	protect := &SaveOptions{Protect: []string{src}}
	checkErr(t, Save(m, src, protect), ErrProtected, src)
	// Another name for the same file.
	alias := filepath.Join(dir, "alias.onnx")
	if err := os.Link(src, alias); err != nil {
		t.Fatal(err)
	}
	checkErr(t, Save(m, alias, protect), ErrProtected, alias)
	// The source's external data is protected with it.
	if err := os.Rename(alias, filepath.Join(dir, "other.onnx")); err != nil {
		t.Fatal(err)
	}
	checkErr(t, Save(m, filepath.Join(dir, "out.onnx"), &SaveOptions{ExternalData: true, Location: "in.onnx.data", Protect: []string{src}}),
		ErrProtected, "in.onnx.data")
	if after, _ := os.ReadFile(src); string(after) != string(before) {
		t.Fatal("protected file changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "out.onnx")); !os.IsNotExist(err) {
		t.Errorf("refused save still wrote out.onnx: %v", err)
	}
	// Elsewhere is fine, and replaces an existing file.
	out := filepath.Join(dir, "out.onnx")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Save(m, out, protect); err != nil {
		t.Fatal(err)
	}
	back, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, m, back, "W", "B")
	noTempFiles(t, dir)
}

func TestSaveErrorsLeaveNoTemp(t *testing.T) {
	dir := t.TempDir()
	m := mlp(t, 64, 32, 4)
	path := filepath.Join(dir, "model.onnx")
	// The data file's name is taken by a folder: renaming onto it fails
	// after both temporary files were written.
	if err := os.Mkdir(path+".data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Save(m, path, &SaveOptions{ExternalData: true}); err == nil {
		t.Fatal("no error")
	}
	noTempFiles(t, dir)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("model written although its data was not: %v", err)
	}
	// Tensor data that does not fit its shape: nothing written.
	m.Graph.Value("B").Init.Raw = m.Graph.Value("B").Init.Raw[:8]
	err := Save(m, filepath.Join(dir, "bad.onnx"), nil)
	checkErr(t, err, ErrInvalid, `"B"`, "bad.onnx")
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("files left behind: %v", names)
	}
	if err := Save(mlp(t, 2, 2, 1), filepath.Join(dir, "no", "such", "dir.onnx"), nil); err == nil {
		t.Error("save into a missing folder succeeded")
	}
	checkErr(t, Save(mlp(t, 2, 2, 1), filepath.Join(dir, "x.onnx"), &SaveOptions{ExternalData: true, Location: "../x.data"}), ErrExternalData, "../x.data")
}

// TestLargeModelNeedsExternalData lowers the 2 GB limit to test the
// automatic switch to external data.
func TestLargeModelNeedsExternalData(t *testing.T) {
	defer func(l int) { protoLimit = l }(protoLimit)
	protoLimit = 4096
	m := mlp(t, 64, 32, 5) // 8 KB of weights
	if _, err := Encode(m); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Encode: %v, want ErrTooLarge", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "big.onnx")
	checkErr(t, Save(m, path, &SaveOptions{DisableExternalData: true}), ErrTooLarge, "disabled")
	if err := Save(m, path, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".data"); err != nil {
		t.Fatalf("no external data written: %v", err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, m, back, "W", "B")
}

// TestExternalDataBomb: a small model whose external tensor declares far
// more bytes than the machine has, in a sparse data file, is refused before
// anything is allocated (it used to crash the runtime); so is one whose
// shape overflows int64.
func TestExternalDataBomb(t *testing.T) {
	dir := t.TempDir()
	const n = 1 << 40 // 4 TiB of float32
	data := filepath.Join(dir, "w.bin")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 * n); err != nil {
		f.Close()
		t.Skipf("no sparse file of 4 TiB here: %v", err)
	}
	f.Close()
	ext := func(dims ...int64) []byte {
		return mustMarshal(t, modelProto(&onnxpb.GraphProto{
			Node: []*onnxpb.NodeProto{node("Identity", "id", []string{"w"}, []string{"y"})},
			Initializer: []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(int32(graph.Float)), Dims: dims,
				DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
				ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}}},
			Output: []*onnxpb.ValueInfoProto{vinfo("y", graph.Float, 1)},
		}))
	}
	for _, c := range []struct {
		name string
		dims []int64
		msg  string
	}{
		{"more than memory", []int64{n}, "memory available"},
		{"shape mismatch", []int64{16}, "shape [16] needs 64"},
		{"shape overflow", []int64{10, 1<<62 + 1}, "more elements than an int64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".onnx")
			if err := os.WriteFile(path, ext(c.dims...), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), `"w"`) {
				t.Errorf("error %v, want one naming \"w\" and %q", err, c.msg)
			}
		})
	}
}
