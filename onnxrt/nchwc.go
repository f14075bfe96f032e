package onnxrt

import (
	"sync"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
)

var (
	nchwcOnce  sync.Once
	nchwcBlock int64
)

// NCHWcBlockSize returns the channel block of ONNX Runtime's NCHWc kernels
// (the CPU execution provider's com.microsoft.nchwc ops, which
// autodiff.ConvGrad.NCHWcBlock emits) on this machine: 16 with AVX-512, 8
// with AVX2; 0 where they are not available (the cuda device, a CPU or a
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
	g := graph.NewGraph("nchwc_probe")
	x, err := g.AddInput("x", &graph.Type{DType: graph.Float, Shape: graph.DimsOf([]int64{1, 4, 1, 1})})
	if err != nil {
		return 0
	}
	n, err := g.AddNode("ReorderInput", "com.microsoft.nchwc", "reorder", []*graph.Value{x}, []string{"y"})
	if err != nil {
		return 0
	}
	y := n.Output(0)
	y.Type = &graph.Type{DType: graph.Float}
	g.Outputs = []*graph.Value{y}
	model, err := onnxio.Encode(&graph.Model{Graph: g, IRVersion: 8,
		Opsets: []graph.OpsetImport{{Domain: "", Version: 17}, {Domain: "com.microsoft.nchwc", Version: 1}}})
	if err != nil {
		return 0
	}
	s, err := NewSession(model, []string{"x"}, []string{"y"}, Options{LibPath: opts.LibPath, Threads: 1})
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
