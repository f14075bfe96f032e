package onnxio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// DefaultSizeThreshold is the default SaveOptions.SizeThreshold: initializers
// with at least this many bytes of data go to the external data file.
const DefaultSizeThreshold = 1024

// SaveOptions controls Save. The zero value (or nil) writes one
// self-contained file, switching to external data only when the model would
// exceed protobuf's 2 GB limit.
type SaveOptions struct {
	// ExternalData moves the data of large initializers to a separate file
	// beside the model.
	ExternalData bool
	// DisableExternalData makes Save fail instead of switching to external
	// data for a model over 2 GB.
	DisableExternalData bool
	// Location is the external data file, relative to the model's folder
	// (default: the model's file name + ".data").
	Location string
	// SizeThreshold is the smallest initializer, in bytes, written
	// externally (default DefaultSizeThreshold).
	SizeThreshold int
	// Protect lists files that must never be overwritten (compared with
	// os.SameFile), typically the input model. When a protected path is the
	// file the model was loaded from, the external data files it was read
	// from are protected too.
	Protect []string
}

// extWriter collects the tensors written to the external data file.
type extWriter struct {
	location  string
	threshold int
	size      int64
	chunks    [][]byte
}

// add appends data and returns its offset in the file.
func (w *extWriter) add(data []byte) int64 {
	off := w.size
	w.chunks = append(w.chunks, data)
	w.size += int64(len(data))
	return off
}

// Save writes m to path atomically: to a temporary file in the same folder,
// synced, then renamed over path, so that path holds either the old or the
// complete new model; temporary files are removed on any error. With
// external data, the data file is written the same way, before the model.
// Save refuses to overwrite the files in opts.Protect. A model whose
// serialization would exceed protobuf's 2 GB limit is always written with
// external data, unless opts.DisableExternalData is set, which is an error.
func Save(m *graph.Model, path string, opts *SaveOptions) error {
	if err := save(m, path, opts); err != nil {
		return fmt.Errorf("onnxio: save %s: %w", path, err)
	}
	return nil
}

func save(m *graph.Model, path string, opts *SaveOptions) error {
	var o SaveOptions
	if opts != nil {
		o = *opts
	}
	if o.ExternalData && o.DisableExternalData {
		return errors.New("ExternalData and DisableExternalData are both set")
	}
	if o.Location == "" {
		o.Location = filepath.Base(path) + ".data"
	}
	if !filepath.IsLocal(filepath.FromSlash(o.Location)) {
		return fmt.Errorf("%w: location %q is not inside the model's folder", ErrExternalData, o.Location)
	}
	if o.SizeThreshold <= 0 {
		o.SizeThreshold = DefaultSizeThreshold
	}
	dir := filepath.Dir(path)
	dataPath := filepath.Join(dir, filepath.FromSlash(o.Location))
	if err := checkProtected(m, path, dataPath, o.Protect); err != nil {
		return err
	}

	encode := func(external bool) (*onnxpb.ModelProto, *extWriter, error) {
		e := &encoder{}
		if external {
			e.ext = &extWriter{location: filepath.ToSlash(o.Location), threshold: o.SizeThreshold}
		}
		mp, err := e.model(m)
		return mp, e.ext, err
	}
	mp, ext, err := encode(o.ExternalData)
	if err != nil {
		return err
	}
	size := proto.Size(mp)
	if size > protoLimit && ext == nil {
		if o.DisableExternalData {
			return fmt.Errorf("%w: %d bytes, and external data is disabled", ErrTooLarge, size)
		}
		if mp, ext, err = encode(true); err != nil {
			return err
		}
		size = proto.Size(mp)
	}
	if size > protoLimit {
		return fmt.Errorf("%w: %d bytes even with external data (threshold %d bytes)", ErrTooLarge, size, o.SizeThreshold)
	}
	if ext != nil && len(ext.chunks) > 0 && sameFileName(dataPath, path) {
		return fmt.Errorf("external data location %q is the model file itself", o.Location)
	}
	b, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), mp)
	if err != nil {
		return err
	}

	var files []*outfile.File
	defer func() {
		for _, f := range files {
			f.Abort()
		}
	}()
	if ext != nil && len(ext.chunks) > 0 {
		f, err := writeTemp(dataPath, func(w io.Writer) error {
			for _, c := range ext.chunks {
				if _, err := w.Write(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	f, err := writeTemp(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	files = append(files, f)
	for _, f := range files {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	outfile.SyncDir(dir)
	if d := filepath.Dir(dataPath); d != dir {
		outfile.SyncDir(d)
	}
	return nil
}

func sameFileName(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// checkProtected fails if path or dataPath is (os.SameFile) one of protect,
// or one of the external data files of a protected source model.
func checkProtected(m *graph.Model, path, dataPath string, protect []string) error {
	if len(protect) == 0 {
		return nil
	}
	guarded := append([]string(nil), protect...)
	if x, ok := m.Ext.(*modelExt); ok && x.source != "" {
		src, err := os.Stat(x.source)
		if err == nil {
			for _, p := range protect {
				if st, err := os.Stat(p); err == nil && os.SameFile(st, src) {
					guarded = append(guarded, x.dataFiles...)
					break
				}
			}
		}
	}
	for _, target := range []string{path, dataPath} {
		tst, err := os.Stat(target)
		if err != nil {
			continue // does not exist yet: nothing to overwrite
		}
		for _, p := range guarded {
			if pst, err := os.Stat(p); err == nil && os.SameFile(tst, pst) {
				return fmt.Errorf("%w: %s is the same file as %s", ErrProtected, target, p)
			}
		}
	}
	return nil
}

// writeTemp writes a temporary file beside final (outfile.Create: our
// naming, the umask, tracked for outfile.RemoveTracked) and syncs it; the
// caller commits or aborts it.
func writeTemp(final string, write func(io.Writer) error) (*outfile.File, error) {
	f, err := outfile.Create(final)
	if err != nil {
		return nil, err
	}
	if err := write(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("writing %s: %w", final, err)
	}
	if err := f.Close(); err != nil {
		f.Abort()
		return nil, err
	}
	return f, nil
}
