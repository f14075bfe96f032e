package shapes

import (
	"slices"
	"testing"
)

// TestArithMod: integer Mod as ONNX defines it (fmod = 0: the divisor's
// sign, as Python's %; fmod = 1: the dividend's), which swin_t's padding
// (w − W mod w) mod w needs; a zero divisor leaves the values unknown.
func TestArithMod(t *testing.T) {
	fresh := func() int64 { return SymBase - 1 }
	if got := arith("Mod", []int64{-7, 7, 8, 0}, []int64{3, -3, 7, 7}, fresh); !slices.Equal(got, []int64{2, -2, 1, 0}) {
		t.Errorf("Mod: %v", got)
	}
	if got := arith("Fmod", []int64{-7, 7}, []int64{3, -3}, fresh); !slices.Equal(got, []int64{-1, 1}) {
		t.Errorf("Fmod: %v", got)
	}
	if got := arith("Mod", []int64{5}, []int64{0}, fresh); got != nil {
		t.Errorf("Mod by zero: %v, want unknown", got)
	}
}
