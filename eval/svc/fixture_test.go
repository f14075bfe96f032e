package svc

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir holds the files written by testdata/svc/make_svc_fixtures.py.
var fixtureDir = filepath.Join("..", "..", "testdata", "svc")

type fixtureMeta struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	File        string  `json:"file"`
	NTrain      int     `json:"n_train"`
	NTest       int     `json:"n_test"`
	D           int     `json:"d"`
	NSV         int     `json:"n_sv"`
	NSupport    [2]int  `json:"n_support"`
	Intercept   float64 `json:"intercept"`
	FitSeconds  float64 `json:"fit_seconds"`
}

type fixture struct {
	fixtureMeta
	xTrain []float64 // n_train×d, float32 values widened
	yTrain []int
	xTest  []float64
	pred   []int     // sklearn predict(x_test)
	dec    []float64 // sklearn decision_function(x_test)
}

func loadManifest(tb testing.TB) []fixtureMeta {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "fixtures.json"))
	if err != nil {
		tb.Fatalf("read manifest: %v", err)
	}
	var m struct {
		Fixtures []fixtureMeta `json:"fixtures"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("parse manifest: %v", err)
	}
	if len(m.Fixtures) == 0 {
		tb.Fatal("manifest lists no fixtures")
	}
	return m.Fixtures
}

func loadFixture(tb testing.TB, meta fixtureMeta) *fixture {
	tb.Helper()
	f, err := readFixture(meta)
	if err != nil {
		tb.Fatalf("fixture %s: %v", meta.Name, err)
	}
	return f
}

func readFixture(meta fixtureMeta) (*fixture, error) {
	fh, err := os.Open(filepath.Join(fixtureDir, meta.File))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	n, m, d := meta.NTrain, meta.NTest, meta.D
	want := 4*n*d + n + 4*m*d + m + 8*m
	if len(raw) != want {
		return nil, fmt.Errorf("%d bytes, want %d", len(raw), want)
	}
	off := 0
	f32 := func(k int) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[off:])))
			off += 4
		}
		return out
	}
	u8 := func(k int) []int {
		out := make([]int, k)
		for i := range out {
			out[i] = int(raw[off])
			off++
		}
		return out
	}
	fx := &fixture{fixtureMeta: meta}
	fx.xTrain = f32(n * d)
	fx.yTrain = u8(n)
	fx.xTest = f32(m * d)
	fx.pred = u8(m)
	fx.dec = make([]float64, m)
	for i := range fx.dec {
		fx.dec[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[off:]))
		off += 8
	}
	return fx, nil
}
