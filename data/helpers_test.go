package data

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes b to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// idxBytes encodes an unsigned-byte IDX file.
func idxBytes(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// wantErr fails unless err is non-nil and its message contains every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

// batchOf returns example i of s as Batch writes it.
func batchOf(t *testing.T, s *Split, i int) []float32 {
	t.Helper()
	sh := s.Shape()
	dst := make([]float32, sh[0]*sh[1]*sh[2])
	if err := s.Batch(dst, []int{i}); err != nil {
		t.Fatal(err)
	}
	return dst
}

// pixel returns the value at (c, y, x) of example i as Batch writes it.
func pixel(t *testing.T, s *Split, i, c, y, x int) float32 {
	t.Helper()
	sh := s.Shape()
	return batchOf(t, s, i)[c*sh[1]*sh[2]+y*sh[2]+x]
}

func near(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6 }

// --- a minimal MAT v5 writer ---

type matW struct {
	bytes.Buffer
	bo binary.ByteOrder
}

func newMatW(bigEndian bool) *matW {
	m := &matW{bo: binary.LittleEndian}
	if bigEndian {
		m.bo = binary.BigEndian
	}
	text := []byte("MATLAB 5.0 MAT-file, written by the unlearn data tests")
	hdr := make([]byte, 128)
	copy(hdr, text)
	for i := len(text); i < 116; i++ {
		hdr[i] = ' '
	}
	m.bo.PutUint16(hdr[124:], 0x0100)
	if bigEndian {
		copy(hdr[126:], "MI")
	} else {
		copy(hdr[126:], "IM")
	}
	m.Write(hdr)
	return m
}

// elem encodes a data element, padded to 8 bytes; small elements (≤ 4
// bytes) use the compact format when small is set.
func (m *matW) elem(typ uint32, data []byte, small bool) []byte {
	var b bytes.Buffer
	if small && len(data) <= 4 {
		var w [8]byte
		m.bo.PutUint32(w[:4], uint32(len(data))<<16|typ)
		copy(w[4:], data)
		b.Write(w[:])
		return b.Bytes()
	}
	binary.Write(&b, m.bo, typ)
	binary.Write(&b, m.bo, uint32(len(data)))
	b.Write(data)
	for b.Len()%8 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

// matrix encodes a whole miMATRIX element. dataType is the MAT data type of
// the real part, whose raw bytes are re.
func (m *matW) matrix(name string, class uint32, dims []int, dataType uint32, re []byte) []byte {
	var body bytes.Buffer
	flags := make([]byte, 8)
	m.bo.PutUint32(flags, class)
	body.Write(m.elem(miUINT32, flags, false))
	d := make([]byte, 4*len(dims))
	for i, v := range dims {
		m.bo.PutUint32(d[4*i:], uint32(v))
	}
	body.Write(m.elem(miINT32, d, false))
	body.Write(m.elem(miINT8, []byte(name), true))
	body.Write(m.elem(dataType, re, false))
	return m.elem(miMATRIX, body.Bytes(), false)
}

// add appends a variable, zlib-compressed when compress is set.
func (m *matW) add(t testing.TB, compress bool, name string, class uint32, dims []int, dataType uint32, re []byte) {
	el := m.matrix(name, class, dims, dataType, re)
	if !compress {
		m.Write(el)
		return
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(el)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	binary.Write(m, m.bo, uint32(miCOMPRESSED))
	binary.Write(m, m.bo, uint32(z.Len()))
	m.Write(z.Bytes())
}

func (m *matW) f64s(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		m.bo.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// --- .npy bytes written by hand (independent of EncodeNPY) ---

func npyRaw(descr, shape string, data []byte) []byte {
	hdr := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

func le(v any) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func isFileError(err error) bool {
	var fe *FileError
	return errors.As(err, &fe)
}

// systemPython returns Debian's /usr/bin/python3 (which has numpy and scipy
// in this project's environment), else python3 on PATH; it skips the test
// when there is none.
func systemPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	return p
}
