package data

import (
	"fmt"
	"math"
)

// npz datasets: x_train, y_train, x_test, y_test.

// npzImages converts an x array to a Split's pixel storage and shape.
// Layouts: N×H×W (C=1); N×H×W×C when the last dim is 1 or 3 and the second
// is not (transposed to channel-first); otherwise N×C×H×W.
func npzImages(path, key string, a *Array) (n, c, h, w int, u8 []uint8, f32 []float32, err error) {
	hwc := false
	switch len(a.Shape) {
	case 3:
		n, c, h, w = a.Shape[0], 1, a.Shape[1], a.Shape[2]
	case 4:
		n = a.Shape[0]
		if l, s := a.Shape[3], a.Shape[1]; (l == 1 || l == 3) && s != 1 && s != 3 {
			h, w, c = a.Shape[1], a.Shape[2], a.Shape[3]
			hwc = true
		} else {
			c, h, w = a.Shape[1], a.Shape[2], a.Shape[3]
		}
	default:
		err = fileErr(path, "%s has shape %v, want N×H×W, N×H×W×C or N×C×H×W", key, a.Shape)
		return
	}
	if c == 0 || h == 0 || w == 0 {
		err = fileErr(path, "%s has shape %v: empty images", key, a.Shape)
		return
	}
	switch a.DType {
	case "|u1":
		u8 = a.U8
	case "<f4":
		f32 = a.F32
	case "<f8":
		f32 = make([]float32, len(a.F64))
		for i, v := range a.F64 {
			f32[i] = float32(v)
		}
	case "<i4", "<i8":
		vals, _ := a.Int64s()
		u8 = make([]uint8, len(vals))
		for i, v := range vals {
			if v < 0 || v > 255 {
				err = fileErr(path, "%s: integer pixel %d = %d is outside [0, 255]", key, i, v)
				return
			}
			u8[i] = uint8(v)
		}
	default:
		err = fileErr(path, "%s: dtype %s is not supported for images", key, a.DType)
		return
	}
	if f32 != nil {
		if err = checkFloatPixels(path, key, f32); err != nil {
			return
		}
	}
	if hwc && c > 1 {
		chw, hw := c*h*w, h*w
		if u8 != nil {
			t := make([]uint8, len(u8))
			for k := range n {
				src, dst := u8[k*chw:(k+1)*chw], t[k*chw:(k+1)*chw]
				for p := range hw {
					for ci := range c {
						dst[ci*hw+p] = src[p*c+ci]
					}
				}
			}
			u8 = t
		} else {
			t := make([]float32, len(f32))
			for k := range n {
				src, dst := f32[k*chw:(k+1)*chw], t[k*chw:(k+1)*chw]
				for p := range hw {
					for ci := range c {
						dst[ci*hw+p] = src[p*c+ci]
					}
				}
			}
			f32 = t
		}
	}
	return
}

// MaxFloatPixel bounds the magnitude of a float pixel in an npz file. The
// convention is pixels in [0, 1] (what 8-bit images become: v/255), before
// any --mean/--std; 8-bit values stored as floats (0–255) and pixels
// already normalized (for 8-bit images and a std of at least 1/255, within
// ±255) are read as stored too, and the main command's preprocessing check
// (eval.Suite.CheckPreprocessing) refuses them where the model scores far
// better on them brought to [0, 1]. Beyond ±255 no image convention
// applies: such a value is refused at load, as are NaN and ±Inf.
const MaxFloatPixel = 255

// checkFloatPixels refuses a float image array holding a value that is not
// finite or lies beyond ±MaxFloatPixel, naming the first one.
func checkFloatPixels(path, key string, v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x > MaxFloatPixel || x < -MaxFloatPixel {
			return fileErr(path, "%s: float pixel %d = %g: float pixels must be finite and within ±%d "+
				"(the convention is [0, 1], as 8-bit pixels scaled by 1/255)", key, i, x, MaxFloatPixel)
		}
	}
	return nil
}

// npzLabels converts a y array (shape N or N×1) to int32 labels.
func npzLabels(path, key string, a *Array) ([]int32, error) {
	if len(a.Shape) != 1 && !(len(a.Shape) == 2 && a.Shape[1] == 1) {
		return nil, fileErr(path, "%s has shape %v, want N or N×1", key, a.Shape)
	}
	if a.DType == "|b1" {
		return nil, fileErr(path, "%s: bool labels are not supported", key)
	}
	vals, err := a.Int64s()
	if err != nil {
		return nil, fileErr(path, "%s: %v", key, err)
	}
	out := make([]int32, len(vals))
	for i, v := range vals {
		if v < 0 || v > math.MaxInt32 {
			return nil, fileErr(path, "%s[%d] = %d: label out of range", key, i, v)
		}
		out[i] = int32(v)
	}
	return out, nil
}

func openNPZ(path string) (*Dataset, int, error) {
	arrs, err := ReadNPZ(path)
	if err != nil {
		return nil, 0, err
	}
	for _, k := range []string{"x_train", "y_train", "x_test", "y_test"} {
		if arrs[k] == nil {
			return nil, 0, fileErr(path, "missing array %q (need x_train, y_train, x_test, y_test)", k)
		}
	}
	var splits [2]*Split
	for i, sp := range []string{"train", "test"} {
		xk, yk := "x_"+sp, "y_"+sp
		n, c, h, w, u8, f32, err := npzImages(path, xk, arrs[xk])
		if err != nil {
			return nil, 0, err
		}
		labels, err := npzLabels(path, yk, arrs[yk])
		if err != nil {
			return nil, 0, err
		}
		if len(labels) != n {
			return nil, 0, fileErr(path, "inconsistent counts: %s holds %d images, %s holds %d labels", xk, n, yk, len(labels))
		}
		var s *Split
		if u8 != nil {
			s, err = NewSplitU8(c, h, w, u8, labels)
		} else {
			s, err = NewSplitF32(c, h, w, f32, labels)
		}
		if err != nil {
			return nil, 0, wrapFile(path, fmt.Errorf("%s: %w", xk, err))
		}
		s.src = path
		splits[i] = s
	}
	return &Dataset{Format: FormatNPZ, Train: splits[0], Test: splits[1]}, 0, nil
}
