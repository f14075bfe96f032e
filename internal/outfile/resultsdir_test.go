//go:build unix

package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// CheckResultsDir: a resumable results folder may exist, but not be a
// link, a file, an input, or lie inside a dataset, and its own entries may
// not be links.
func TestCheckResultsDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	model := filepath.Join(dir, "m.onnx")
	for _, p := range []string{filepath.Join(data, "class0"), filepath.Join(dir, "res"), filepath.Join(dir, "res2")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(model, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "res"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(dir, "res2", "tasks")); err != nil {
		t.Fatal(err)
	}
	ins := []Input{{Flag: "data", Path: data, Tree: true}, {Flag: "model", Path: model}}
	for _, c := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "res"), nil},
		{filepath.Join(dir, "new"), nil},
		{filepath.Join(data, "results"), ErrCollision},
		{data, ErrCollision},
		{model, ErrNotRegular},
		{filepath.Join(dir, "link"), ErrSymlink},
		{filepath.Join(dir, "res2"), ErrSymlink},
		{filepath.Join(dir, "nope", "res"), ErrFolder},
		{"/", ErrCollision},
		{"/.", ErrCollision},
	} {
		err := CheckResultsDir(Output{Flag: "results", Path: c.path}, ins, "tasks", "work")
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.path, err, c.want)
		}
	}
}
