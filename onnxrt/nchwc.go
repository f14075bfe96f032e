package onnxrt

import (
	_ "embed"
	"sync"
)

// nchwcProbe is a one-node ONNX model: a com.microsoft.nchwc ReorderInput
// of a [1, 4, 1, 1] float input x to y (IR 8, opsets 17 and nchwc 1).
// onnxrt runs models, it does not build them: TestNCHWcProbeModel builds
// the same model with graph and onnxio and compares the bytes, and writes
// the file again when UNLEARN_WRITE_PROBE=1.
//
//go:embed nchwc_probe.onnx
var nchwcProbe []byte

var (
	nchwcOnce  sync.Once
	nchwcBlock int64
)

// NCHWcBlockSize returns the channel block of ONNX Runtime's NCHWc kernels
// (the CPU execution provider's com.microsoft.nchwc ops, which
// train/lowering/cpu emits where its Lowering.NCHWcBlock is set) on this
// machine: 16 with AVX-512, 8 with AVX2; 0 where they are not available (the cuda device, a CPU or a
// library without them). The library answers once per process: a
// ReorderInput of 4 channels pads them to one block.
func NCHWcBlockSize(opts Options) int64 {
	if opts.Device == "cuda" {
		return 0
	}
	nchwcOnce.Do(func() { nchwcBlock = probeNCHWc(opts) })
	return nchwcBlock
}

func probeNCHWc(opts Options) int64 {
	s, err := NewSession(nchwcProbe, []string{"x"}, []string{"y"}, Options{LibPath: opts.LibPath, Threads: 1})
	if err != nil {
		return 0
	}
	defer s.Close()
	in, err := NewFloat32([]int64{1, 4, 1, 1}, make([]float32, 4))
	if err != nil {
		return 0
	}
	defer in.Close()
	out := []*Tensor{nil}
	if err := s.Run([]*Tensor{in}, out); err != nil {
		return 0
	}
	defer out[0].Close()
	if sh := out[0].Shape(); len(sh) == 4 && sh[1] > 4 {
		return sh[1]
	}
	return 0
}
