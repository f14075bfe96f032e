package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
)

// fashionFolder writes the first six training and two test images of each
// class of the bundled Fashion-MNIST subset as a grey image folder, classes
// c0 … c9, files img_<k>.png numbered in source order: img_10.png sorts
// before img_2.png, so ImageFolder order is not source order. It returns
// the folder and each training image's path (relative to train/) in
// ImageFolder order, worked out here independently of the data package.
func fashionFolder(t *testing.T) (string, []string) {
	t.Helper()
	ds, err := data.Open(filepath.Join("..", "..", "testdata", "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "fashion-folder")
	var order []string
	for split, per := range map[string]int{"train": 12, "test": 2} {
		s := map[string]*data.Split{"train": ds.Train, "test": ds.Test}[split]
		count := make([]int, 10)
		pix := make([]float32, 28*28)
		for i := 0; i < s.Len(); i++ {
			l := s.Label(i)
			if count[l] == per {
				continue
			}
			count[l]++
			if err := s.Batch(pix, []int{i}); err != nil {
				t.Fatal(err)
			}
			img := image.NewGray(image.Rect(0, 0, 28, 28))
			for k, v := range pix {
				img.Pix[k] = uint8(v*255 + 0.5)
			}
			rel := fmt.Sprintf("c%d/img_%d.png", l, count[l])
			p := filepath.Join(root, split, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(f, img); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if split == "train" {
				order = append(order, rel)
			}
		}
	}
	slices.Sort(order) // class folders c0 … c9, then file names: ImageFolder's order for flat class folders
	return root, order
}

// TestForgetByFileNames: `unlearn data` lists an image folder in
// ImageFolder order, and a forget file of the listed names (in any order,
// with or without train/) gives eval the same forget set as the ids file
// of their ids: the same counts and accuracies, and metrics.json says how
// each was given.
func TestForgetByFileNames(t *testing.T) {
	root, order := fashionFolder(t)
	dir := t.TempDir()
	listing := filepath.Join(dir, "listing.json")
	if r := runCLI(t, "data", "--data", root, "--json", listing); r.code != 0 {
		t.Fatalf("data: exit %d: %s", r.code, r.stderr)
	}
	var l data.Listing
	b, err := os.ReadFile(listing)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Examples) != len(order) || l.Format != "imagefolder" || l.Split != "train" {
		t.Fatalf("listing of %d examples (%s, %s), want %d", len(l.Examples), l.Format, l.Split, len(order))
	}
	for i, e := range l.Examples {
		if e.ID != i || e.File != order[i] || e.Class != fmt.Sprintf("c%d", e.Label) || !strings.HasPrefix(e.File, e.Class+"/") {
			t.Fatalf("row %d: %+v, want file %s", i, e, order[i])
		}
	}
	// The text listing has the same rows.
	r := runCLI(t, "data", "--data", root)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("\n1\t0\tc0\t%s\n", order[1])) {
		t.Fatalf("text listing (exit %d):\n%.300s", r.code, r.stdout)
	}

	// Every third example, names listed backwards, some under train/.
	var names, ids strings.Builder
	names.WriteString("# forget by file name\n")
	n := 0
	for i := len(order) - 1; i >= 0; i-- {
		if i%3 != 0 {
			continue
		}
		name := order[i]
		if n%2 == 1 {
			name = "train/" + name
		}
		fmt.Fprintf(&names, "%s\n", name)
		fmt.Fprintf(&ids, "%d\n", i)
		n++
	}
	byName := writeFile(t, "names.txt", []byte(names.String()))
	byID := writeFile(t, "ids.txt", []byte(ids.String()))
	type forgetDoc struct {
		Forget struct {
			N     int    `json:"n"`
			Given string `json:"given"`
		} `json:"forget"`
	}
	measure := func(forget string) (*evalDoc, forgetDoc) {
		out := filepath.Join(t.TempDir(), "m.json")
		r := runCLI(t, "eval", "--model", model(t), "--data", root, "--forget", forget, "--no-mia", "--json", out, "--threads", "2")
		if r.code != 0 {
			t.Fatalf("eval --forget %s: exit %d: %s", forget, r.code, r.stderr)
		}
		doc, _ := readMetrics(t, out)
		var f forgetDoc
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		return doc, f
	}
	dn, fn := measure(byName)
	di, fi := measure(byID)
	if fn.Forget.Given != "names" || fi.Forget.Given != "ids" || fn.Forget.N != n || fi.Forget.N != n {
		t.Errorf("forget sections: names %+v, ids %+v; want n %d", fn.Forget, fi.Forget, n)
	}
	for _, k := range []string{"forget", "retain", "train", "test"} {
		if dn.Counts[k] != di.Counts[k] || dn.Accuracy[k] != di.Accuracy[k] {
			t.Errorf("%s: names give %d examples at %v, ids %d at %v", k, dn.Counts[k], dn.Accuracy[k], di.Counts[k], di.Accuracy[k])
		}
	}
	if dn.Counts["forget"] != n || dn.Counts["retain"] != len(order)-n {
		t.Errorf("counts %v, want forget %d, retain %d", dn.Counts, n, len(order)-n)
	}
	// The per-class forget counts pin which examples were forgotten, not
	// only how many.
	for c := range dn.PerClass["forget"] {
		if dn.PerClass["forget"][c].N != di.PerClass["forget"][c].N {
			t.Errorf("class %d: %d forgotten by name, %d by id", c, dn.PerClass["forget"][c].N, di.PerClass["forget"][c].N)
		}
	}
}

func TestDataCommand(t *testing.T) {
	r := runCLI(t, "data", "--split", "test")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 1002 || !strings.HasPrefix(lines[0], "# testdata/fashion (idx), test split, 1000 examples") ||
		!strings.HasPrefix(lines[2], "0\t") || !strings.HasSuffix(lines[2], "\t-\t-") {
		t.Fatalf("exit %d, %d lines:\n%.300s", r.code, len(lines), r.stdout)
	}
	wantError(t, runCLI(t, "data", "--split", "val"), exitUsage, "--split", "val")
	wantError(t, runCLI(t, "data", "--json", "testdata/fashion/train-labels-idx1-ubyte"), exitUsage, "--json", "--data input")
}
