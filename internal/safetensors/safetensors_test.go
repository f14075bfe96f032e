package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// A file spelled out byte by byte from the format description: header
// length 8 bytes LE, the JSON header (padded with spaces to a multiple of
// 8), then the data of "a" (F32 [2]: 1, -2) and "b" (I64 [] : 7).
func TestWriteMatchesHandBuiltBytes(t *testing.T) {
	hdr := `{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"I64","shape":[],"data_offsets":[8,16]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	var want bytes.Buffer
	binary.Write(&want, binary.LittleEndian, uint64(len(hdr)))
	want.WriteString(hdr)
	want.Write([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}) // 1.0f, -2.0f
	want.Write([]byte{7, 0, 0, 0, 0, 0, 0, 0})
	var got bytes.Buffer
	err := Write(&got, []Tensor{
		{Name: "b", DType: "I64", Data: []byte{7, 0, 0, 0, 0, 0, 0, 0}},
		{Name: "a", DType: "F32", Shape: []int64{2}, Data: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
	}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("got\n%q\nwant\n%q", got.Bytes(), want.Bytes())
	}
	ts, meta, err := Read(bytes.NewReader(want.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "a" || ts[1].Name != "b" || meta["format"] != "pt" ||
		!bytes.Equal(ts[0].Data, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}) || len(ts[1].Shape) != 0 {
		t.Fatalf("read back %+v %v", ts, meta)
	}
}

func TestErrors(t *testing.T) {
	file := func(hdr string, data int) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.LittleEndian, uint64(len(hdr)))
		b.WriteString(hdr)
		b.Write(make([]byte, data))
		return b.Bytes()
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "header length"},
		{"short header", file(`{"a":`, 0)[:10], "reading the header"},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<40), "limit"},
		{"not json", file(`[1,2]`, 0), "header"},
		{"offsets beyond data", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), `"a"`},
		{"size mismatch", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "want 12"},
		{"unknown dtype", file(`{"a":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}}`, 1), "F7"},
		{"negative dim", file(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`, 0), "negative"},
	}
	for _, c := range cases {
		_, _, err := Read(bytes.NewReader(c.b))
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrFormat mentioning %q", c.name, err, c.want)
		}
	}
	if err := Write(&bytes.Buffer{}, []Tensor{{Name: "x", DType: "F32", Shape: []int64{2}, Data: make([]byte, 4)}}, nil); err == nil {
		t.Error("Write accepted 4 bytes for F32 [2]")
	}
	if err := Write(&bytes.Buffer{}, []Tensor{{Name: "x", DType: "U8", Data: []byte{1}}, {Name: "x", DType: "U8", Data: []byte{1}}}, nil); err == nil {
		t.Error("Write accepted a duplicate name")
	}
}

func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	Write(&b, []Tensor{{Name: "w", DType: "F32", Shape: []int64{1, 2}, Data: make([]byte, 8)}}, map[string]string{"k": "v"})
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		ts, meta, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		// What reads must write and read back the same.
		var out bytes.Buffer
		if err := Write(&out, ts, meta); err != nil {
			t.Fatalf("re-writing a file that read: %v", err)
		}
		again, _, err := Read(&out)
		if err != nil || len(again) != len(ts) {
			t.Fatalf("round trip: %v", err)
		}
		for i := range ts {
			if again[i].Name != ts[i].Name || !bytes.Equal(again[i].Data, ts[i].Data) {
				t.Fatalf("round trip changed %q", ts[i].Name)
			}
		}
	})
}
