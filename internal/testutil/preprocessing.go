package testutil

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// The preprocessing mistakes of issue 64, made from the bundled models
// and data: each helper writes its fixture into a fresh temporary folder.

// FashionMean and FashionStd are the bundled Fashion-MNIST subset's pixel
// mean and std (of pixel/255 over its 4,000 training images, rounded):
// the normalization NormalizedInputModel builds in.
const (
	FashionMean = 0.286
	FashionStd  = 0.353
)

// NormalizedInputModel writes a copy of the model at src that takes
// normalized images, (x − mean) / std, as a model trained with
// torchvision's Normalize(mean, std) does: its input goes through
// x·std + mean (a Mul and an Add) before the original graph, so that it
// scores the original's accuracy on data normalized with mean and std.
// With meta it records them as its unlearn.mean/unlearn.std metadata;
// without, it has none (the export "without the mean/std metadata").
func NormalizedInputModel(t testing.TB, src string, mean, std float32, meta bool) string {
	t.Helper()
	m, err := onnxio.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	in := g.Inputs[0]
	uses := append([]graph.Use(nil), in.Uses()...)
	s, err := g.AddInitializer(graph.NewFloat32(g.FreshName("prep_std"), nil, []float32{std}))
	if err != nil {
		t.Fatal(err)
	}
	mu, err := g.AddInitializer(graph.NewFloat32(g.FreshName("prep_mean"), nil, []float32{mean}))
	if err != nil {
		t.Fatal(err)
	}
	mul, err := g.AddNode("Mul", "", g.FreshName("prep_mul"), []*graph.Value{in, s}, []string{g.FreshName("prep_scaled")})
	if err != nil {
		t.Fatal(err)
	}
	add, err := g.AddNode("Add", "", g.FreshName("prep_add"), []*graph.Value{mul.Output(0), mu},
		[]string{g.FreshName("prep_pixels")})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		u.Node.SetInput(u.Index, add.Output(0))
	}
	if err := g.SortTopologically(); err != nil {
		t.Fatal(err)
	}
	m.Metadata = nil
	if meta {
		m.Metadata = map[string]string{data.MetaMean: fmt.Sprint(mean), data.MetaStd: fmt.Sprint(std)}
	}
	out := filepath.Join(t.TempDir(), "normalized-"+filepath.Base(src))
	if err := onnxio.Save(m, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// FloatNPZ writes the dataset's splits (at most perSplit examples each,
// spread evenly) as an npz of float32 pixels f(v), v the pixel in [0, 1],
// with their labels.
func FloatNPZ(t testing.TB, ds *data.Dataset, perSplit int, f func(v float32) float32) string {
	t.Helper()
	arrays := map[string]*data.Array{}
	for name, s := range map[string]*data.Split{"train": ds.Train, "test": ds.Test} {
		n := min(perSplit, s.Len())
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i * s.Len() / n
		}
		sh := s.Shape()
		x := make([]float32, n*sh[0]*sh[1]*sh[2])
		if err := s.BatchUnnormalized(x, idx); err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			x[i] = f(v)
		}
		y := make([]int64, n)
		for i, l := range s.Labels(idx) {
			y[i] = int64(l)
		}
		arrays["x_"+name] = data.NewF32([]int{n, sh[0], sh[1], sh[2]}, x)
		arrays["y_"+name] = data.NewI64([]int{n}, y)
	}
	p := filepath.Join(t.TempDir(), "pixels.npz")
	if err := data.WriteNPZ(p, arrays); err != nil {
		t.Fatal(err)
	}
	return p
}

// ImageFolder writes the grey-scale dataset's splits (at most perClass
// examples of each class, the first in the split's order) as an image
// folder whose class folders are named names[label]: train/<name>/<i>.png
// and test/<name>/<i>.png. The tool labels the folders in sorted order,
// so names that do not sort as the labels do make the ImageFolder mistake.
func ImageFolder(t testing.TB, ds *data.Dataset, perClass int, names []string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "folder")
	for split, s := range map[string]*data.Split{"train": ds.Train, "test": ds.Test} {
		sh := s.Shape()
		if sh[0] != 1 {
			t.Fatalf("ImageFolder writes grey images; the data has %d channels", sh[0])
		}
		count := map[int]int{}
		x := make([]float32, sh[1]*sh[2])
		for i := range s.Len() {
			l := s.Label(i)
			if count[l] >= perClass {
				continue
			}
			count[l]++
			if err := s.BatchUnnormalized(x, []int{i}); err != nil {
				t.Fatal(err)
			}
			img := image.NewGray(image.Rect(0, 0, sh[2], sh[1]))
			for p, v := range x {
				img.SetGray(p%sh[2], p/sh[2], color.Gray{Y: uint8(v*255 + 0.5)})
			}
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, split, names[l])
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.png", i)), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// FashionClasses are Fashion-MNIST's class names by label (0 T-shirt/top,
// …, 9 Ankle boot) as folder names: sorted, they give another order
// (ankle_boot, bag, coat, …), the ImageFolder mistake.
var FashionClasses = []string{"t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt",
	"sneaker", "bag", "ankle_boot"}
