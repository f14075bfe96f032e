// Command ortrun runs one ONNX model once on ONNX Runtime with made-up
// inputs and exits 0 when the run succeeds: the probe that
// bench/ort_bisect.py calls on each truncated training graph to find the
// node a device fails on (bench/gpu_check.sh diagnose). Float inputs get
// values from a fixed generator in [-1, 1), integer inputs zeros (valid
// labels); symbolic dimensions take -batch.
//
//	ortrun -model graph.onnx [-device cuda] [-batch 8] [-threads 4]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

func main() {
	model := flag.String("model", "", "ONNX model")
	device := flag.String("device", "cpu", "cpu or cuda")
	batch := flag.Int64("batch", 8, "size of every symbolic dimension")
	threads := flag.Int("threads", 4, "ONNX Runtime intra-op threads")
	flag.Parse()
	if err := run(*model, *device, *batch, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "ortrun:", err)
		os.Exit(1)
	}
}

func run(path, device string, batch int64, threads int) error {
	buf, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	opts := onnxrt.Options{Device: device, Threads: threads}
	if err := onnxrt.Setup(opts); err != nil {
		return err
	}
	ins, outs, err := onnxrt.ModelIO(buf, opts)
	if err != nil {
		return err
	}
	s, err := onnxrt.NewSession(buf, nil, nil, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]*onnxrt.Tensor, len(ins))
	for i, io := range ins {
		shape := make([]int64, len(io.Shape))
		for j, d := range io.Shape {
			if shape[j] = d; d < 0 {
				shape[j] = batch
			}
		}
		n := graph.NumElements(shape)
		var t *onnxrt.Tensor
		switch io.DType {
		case graph.Float:
			x := make([]float32, n)
			for k := range x {
				x[k] = 2*rng.Float32() - 1
			}
			t, err = onnxrt.NewFloat32(shape, x)
		case graph.Int64:
			t, err = onnxrt.NewInt64(shape, make([]int64, n))
		default:
			return fmt.Errorf("input %q: type %v not made up here", io.Name, io.DType)
		}
		if err != nil {
			return err
		}
		defer t.Close()
		in[i] = t
	}
	out := make([]*onnxrt.Tensor, len(outs))
	if err := s.Run(in, out); err != nil {
		return err
	}
	for _, t := range out {
		if t != nil {
			t.Close()
		}
	}
	fmt.Printf("ortrun: %s ran on %s (%d inputs, %d outputs)\n", path, device, len(ins), len(outs))
	return nil
}
