package data

import (
	"errors"
	"fmt"
	"io"
)

// ErrUnknownFormat is returned (wrapped) by Open when a path matches none of
// the supported dataset layouts.
var ErrUnknownFormat = errors.New("data: unrecognized dataset layout")

// FileError is an error about one file, optionally about one line of it.
// Its message reads "path: what" or "path:line: what".
type FileError struct {
	Path string
	Line int // 1-based; 0 when the error is not about a line
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// fileErr builds a *FileError with a formatted message.
func fileErr(path, format string, args ...any) error {
	return &FileError{Path: path, Err: fmt.Errorf(format, args...)}
}

// wrapFile attaches path to err unless err already names a file.
func wrapFile(path string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FileError
	if errors.As(err, &fe) {
		return err
	}
	return &FileError{Path: path, Err: err}
}

// readExact reads exactly n bytes from r. It never allocates much more than
// the data actually present, so a header that claims an absurd size fails with
// a truncation error instead of exhausting memory. what names the data for the
// error message ("pixel data", "record 7").
func readExact(r io.Reader, n int64, what string) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%s: negative size %d", what, n)
	}
	const chunk = 1 << 24
	initial := n
	if initial > chunk {
		initial = chunk
	}
	buf := make([]byte, initial)
	got, err := io.ReadFull(r, buf)
	for err == nil && int64(got) < n {
		grow := int64(len(buf))
		if int64(len(buf))+grow > n {
			grow = n - int64(len(buf))
		}
		nb := make([]byte, int64(len(buf))+grow)
		copy(nb, buf)
		buf = nb
		var m int
		m, err = io.ReadFull(r, buf[got:])
		got += m
	}
	if int64(got) < n {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("truncated %s: expected %d bytes, got %d", what, n, got)
		}
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return buf, nil
}

// mulSize multiplies non-negative sizes, reporting false when the product
// exceeds limit (or overflows).
func mulSize(limit int64, dims ...int64) (int64, bool) {
	p := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, false
		}
		if d == 0 {
			p = 0
			continue
		}
		if p > limit/d {
			// keep scanning for a zero dim? a zero anywhere makes the product 0
			for _, e := range dims {
				if e == 0 {
					return 0, true
				}
			}
			return 0, false
		}
		p *= d
	}
	return p, p <= limit
}

// maxElems bounds the number of elements any reader will accept (2^40): far
// beyond any real dataset, small enough that products never overflow.
const maxElems = int64(1) << 40
