package onnxio

import (
	"fmt"
	"io"
	"os"
	"slices"
)

// WriteFileAtomic writes b to path through a synced temporary file in the
// same folder and a rename (the same path as Save), so readers never see a
// partial file. The temporary file is registered with TrackTemp while it
// exists.
func WriteFileAtomic(path string, b []byte) error {
	return WriteFilesAtomic(map[string][]byte{path: b})
}

// WriteFilesAtomic writes every file through a temporary file beside it
// and renames them all only when every write succeeded; when a rename
// fails, the files already renamed are removed, so no half of the outputs
// is left.
func WriteFilesAtomic(files map[string][]byte) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var staged []*atomicFile
	defer func() {
		for _, a := range staged {
			a.abort()
		}
	}()
	for _, p := range paths {
		b := files[p]
		a, err := writeTemp(p, func(w io.Writer) error { _, err := w.Write(b); return err })
		if err != nil {
			return err
		}
		staged = append(staged, a)
	}
	for i, a := range staged {
		if err := a.commit(); err != nil {
			for _, done := range staged[:i] {
				os.Remove(done.final)
			}
			return fmt.Errorf("writing %s: %w", a.final, err)
		}
	}
	return nil
}
