package onnxio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
)

// Clone returns a deep copy of m, made by encoding and decoding it. A model
// over protobuf's 2 GB limit cannot be encoded into one buffer: it is copied
// through WithTempCopy; the copy holds its data in memory.
func Clone(m *graph.Model) (*graph.Model, error) {
	raw, err := Encode(m)
	if err == nil {
		return Decode(raw, "")
	}
	if !errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	var cp *graph.Model
	err = WithTempCopy(m, func(path string) (err error) {
		cp, err = Load(path)
		return err
	})
	return cp, err
}

// WithTempCopy saves m with external data in a new temporary folder (under
// TMPDIR, which needs room for the weights), calls use with the model's
// path, and removes the folder, also on a second Ctrl-C
// (outfile.RemoveTracked). It
// is how a model over protobuf's 2 GB limit reaches code that reads files.
func WithTempCopy(m *graph.Model, use func(path string) error) error {
	dir, err := os.MkdirTemp("", "unlearn-copy-*")
	if err != nil {
		return fmt.Errorf("onnxio: a temporary folder for a model over 2 GB: %w", err)
	}
	outfile.Track(dir)
	defer func() {
		os.RemoveAll(dir)
		outfile.Untrack(dir)
	}()
	path := filepath.Join(dir, "model.onnx")
	if err := Save(m, path, &SaveOptions{ExternalData: true}); err != nil {
		return err
	}
	return use(path)
}

// LimitForTest lowers the 2 GB limit of Encode and Save to n bytes until the
// returned function restores it, so that tests of other packages can take
// the paths for models over 2 GB with small models. Not for use outside
// tests (it is not safe for concurrent use).
func LimitForTest(n int) (restore func()) {
	old := protoLimit
	protoLimit = n
	return func() { protoLimit = old }
}
