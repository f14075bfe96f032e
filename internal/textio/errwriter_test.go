package textio

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

type failAfter struct {
	n   int
	buf bytes.Buffer
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return f.buf.Write(p)
}

func TestErrWriterKeepsTheFirstError(t *testing.T) {
	f := &failAfter{n: 1}
	w := &ErrWriter{W: f}
	fmt.Fprint(w, "a")
	fmt.Fprint(w, "b")
	fmt.Fprint(w, "c")
	if w.Err == nil || w.Err.Error() != "disk full" || f.buf.String() != "a" || f.n != 0 {
		t.Errorf("err %v, written %q", w.Err, f.buf.String())
	}
}
