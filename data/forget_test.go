package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// petsFolder writes a small image folder whose ImageFolder order differs
// from the order the files were written in and from plain name order
// across classes: train cat/10.png, cat/2.png, cat/sub/0.png, dog/a#1.png,
// dog/b.png (ids 0–4).
func petsFolder(t *testing.T) *Dataset {
	t.Helper()
	root := filepath.Join(t.TempDir(), "pets")
	for i, f := range []string{"train/dog/b.png", "train/dog/a#1.png", "train/cat/sub/0.png", "train/cat/2.png", "train/cat/10.png", "test/dog/x.png", "test/cat/y.png"} {
		writeFile(t, root, f, pngBytes(t, grayImage(10*i, 2, 3)))
	}
	d, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSplitFiles(t *testing.T) {
	d := petsFolder(t)
	want := []string{"cat/10.png", "cat/2.png", "cat/sub/0.png", "dog/a#1.png", "dog/b.png"}
	if !d.Train.HasFiles() {
		t.Fatal("image folder split has no files")
	}
	for i, w := range want {
		if got := d.Train.File(i); got != w {
			t.Errorf("File(%d) = %q, want %q", i, got, w)
		}
	}
	if got := d.Train.Subset([]int{4, 0}).File(0); got != "dog/b.png" {
		t.Errorf("subset File(0) = %q, want dog/b.png", got)
	}
	if d.Test.File(0) != "cat/y.png" || d.Test.File(1) != "dog/x.png" {
		t.Errorf("test files %q %q", d.Test.File(0), d.Test.File(1))
	}
}

func TestParseForgetNames(t *testing.T) {
	d := petsFolder(t)
	// Names relative to the split folder, with or without train/, cleaned;
	// '#' inside a name is part of it, after a space it starts a comment.
	in := "\uFEFF# the forget set\ndog/b.png\n  train/cat/2.png  # a cat\n./cat//sub/0.png\ndog/a#1.png\n"
	ids, given, err := ParseForget(strings.NewReader(in), "names.txt", d.Train)
	if err != nil {
		t.Fatal(err)
	}
	if given != GivenNames || !slices.Equal(ids, []int{4, 1, 2, 3}) {
		t.Errorf("got %v %q, want [4 1 2 3] (file order) and names", ids, given)
	}
	// The same file as ids.
	ids, given, err = ParseForget(strings.NewReader("# ids\n4\n1\n2 # two\n3\n"), "ids.txt", d.Train)
	if err != nil || given != GivenIDs || !slices.Equal(ids, []int{4, 1, 2, 3}) {
		t.Errorf("ids on an image folder: %v %q %v", ids, given, err)
	}
	for _, c := range []struct {
		in, want string
		line     int
	}{
		{"cat/2.png\ncat/3.png\n", `names.txt:2: "cat/3.png" is not an image of the training split (names are paths relative to the split folder, like "cat/10.png")`, 2},
		{"test/cat/y.png\n", `names.txt:1: the line is not an image of the training split`, 1}, // not quoted: no name read yet
		{"cat/2.png\n3\n", `names.txt:2: "3" is an id, and line 1 names a file: a forget file lists ids or file names, not both`, 2},
		{"# x\n3\ncat/2.png\n", `names.txt:3: "cat/2.png" is not an integer id, and line 2 gives an id: a forget file lists ids or file names, not both`, 3},
		{"cat/2.png\ndog/b.png\ntrain/cat/2.png\n", `names.txt:3: "train/cat/2.png" repeats line 1 (both name cat/2.png, id 1)`, 3},
		{"3\n3\n", "names.txt:2: id 3 repeats line 1", 2},
		{"cat/10.png\ncat/2.png\ncat/sub/0.png\ndog/a#1.png\ndog/b.png\n", "names.txt: file names cover all 5 training examples", 0},
		{"# nothing\n", "names.txt: no ids", 0},
	} {
		_, _, err := ParseForget(strings.NewReader(c.in), "names.txt", d.Train)
		wantErr(t, err, c.want)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Line != c.line {
			t.Errorf("%q: error %v, want line %d", c.in, err, c.line)
		}
	}
}

// File names on data without them are refused, saying that ids are
// positions there; a mistyped id keeps the plain message.
func TestParseForgetNoFiles(t *testing.T) {
	s, err := NewSplitU8(1, 1, 1, make([]uint8, 10), make([]int32, 10))
	if err != nil {
		t.Fatal(err)
	}
	if s.HasFiles() || s.File(3) != "" {
		t.Fatalf("an in-memory split has files")
	}
	_, _, err = ParseForget(strings.NewReader("# names\ncoat/0.png\n"), "names.txt", s)
	wantErr(t, err, `names.txt:2: the line is not an integer id: this dataset has no file names, so ids are 0-based positions in its training split`, "only image folders take file names")
	_, _, err = ParseForget(strings.NewReader("1\nfive\n"), "ids.txt", s)
	wantErr(t, err, `ids.txt:2: "five" is not an integer id`)
	if strings.Contains(err.Error(), "file names") {
		t.Errorf("a mistyped id is taken for a file name: %v", err)
	}
	ids, given, err := ParseForget(strings.NewReader("7\n2\n"), "ids.txt", s)
	if err != nil || given != GivenIDs || !slices.Equal(ids, []int{7, 2}) {
		t.Errorf("ids: %v %q %v", ids, given, err)
	}
}

func TestReadForget(t *testing.T) {
	d := petsFolder(t)
	p := writeFile(t, t.TempDir(), "forget.txt", []byte("cat/sub/0.png\n"))
	ids, given, err := ReadForget(p, d.Train)
	if err != nil || given != GivenNames || !slices.Equal(ids, []int{2}) {
		t.Fatalf("%v %q %v", ids, given, err)
	}
	_, _, err = ReadForget(filepath.Join(t.TempDir(), "none.txt"), d.Train)
	wantErr(t, err, "none.txt")
}

// The listing is in id order, which for an image folder is torchvision's
// ImageFolder order (the order TestImageFolderRGB checks by pixels); the
// file column read back as a forget file gives the same ids.
func TestList(t *testing.T) {
	d := petsFolder(t)
	l, err := List(d, "train")
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{{0, 0, "cat", "cat/10.png"}, {1, 0, "cat", "cat/2.png"}, {2, 0, "cat", "cat/sub/0.png"},
		{3, 1, "dog", "dog/a#1.png"}, {4, 1, "dog", "dog/b.png"}}
	if !slices.Equal(l.Examples, want) || l.Split != "train" || l.Format != FormatImageFolder {
		t.Fatalf("listing %+v", l)
	}
	var b bytes.Buffer
	if err := l.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 7 || lines[3] != "1\t0\tcat\tcat/2.png" {
		t.Fatalf("text listing:\n%s", b.String())
	}
	var names []string
	for _, ln := range lines[2:] {
		if f := strings.Split(ln, "\t"); f[0] != "2" {
			names = append(names, f[3])
		}
	}
	ids, _, err := ParseForget(strings.NewReader(strings.Join(names, "\n")), "listed.txt", d.Train)
	if err != nil || !slices.Equal(ids, []int{0, 1, 3, 4}) {
		t.Errorf("names from the listing: %v %v", ids, err)
	}
	js, err := json.Marshal(l)
	if err != nil || !strings.Contains(string(js), `{"id":0,"label":0,"class":"cat","file":"cat/10.png"}`) {
		t.Errorf("JSON %s %v", js, err)
	}
	if l, err = List(d, "test"); err != nil || len(l.Examples) != 2 || l.Examples[1] != (Example{1, 1, "dog", "dog/x.png"}) {
		t.Errorf("test listing %+v %v", l, err)
	}
	if _, err := List(d, "val"); err == nil {
		t.Error("split val accepted")
	}
	// Without class names or files: ids and labels only.
	s, _ := NewSplitU8(1, 1, 1, []uint8{1, 2}, []int32{1, 0})
	m, err := NewDataset("mem", s, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l, err = List(m, "train"); err != nil || !slices.Equal(l.Examples, []Example{{ID: 0, Label: 1}, {ID: 1, Label: 0}}) {
		t.Errorf("memory listing %+v %v", l, err)
	}
	b.Reset()
	l.WriteText(&b)
	if !strings.Contains(b.String(), "0\t1\t-\t-\n") {
		t.Errorf("text listing without names:\n%s", b.String())
	}
}

func FuzzParseForget(f *testing.F) {
	f.Add("cat/2.png\n# x\ntrain/dog/b.png")
	f.Add("1\ncat/2.png")
	f.Add("dog/a#1.png # c\n3")
	files := []string{"cat/10.png", "cat/2.png", "cat/sub/0.png", "dog/a#1.png", "dog/b.png"}
	f.Fuzz(func(t *testing.T, in string) {
		ids, given, err := parseForget(strings.NewReader(in), "fuzz.txt", len(files), files)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if (given != GivenIDs && given != GivenNames) || len(ids) == 0 || len(ids) >= len(files) {
			t.Fatalf("%v %q accepted", ids, given)
		}
		seen := map[int]bool{}
		for _, id := range ids {
			if id < 0 || id >= len(files) || seen[id] {
				t.Fatalf("bad id %d", id)
			}
			seen[id] = true
		}
	})
}

// A forget table of an image folder may name its file column instead of
// an id column.
func TestParseForgetTable(t *testing.T) {
	d := petsFolder(t)
	ids, given, err := ParseForget(strings.NewReader("label,File\n0,dog/b.png\n1,train/cat/2.png\n"), "f.csv", d.Train)
	if err != nil || given != GivenNames || !slices.Equal(ids, []int{4, 1}) {
		t.Errorf("file column: %v %q %v, want [4 1] names", ids, given, err)
	}
	_, _, err = ParseForget(strings.NewReader("file,label\ncat/2.png,0\n3,1\n"), "f.csv", d.Train)
	wantErr(t, err, `f.csv:3: "3" in the "file" column is not a file name`)
}
