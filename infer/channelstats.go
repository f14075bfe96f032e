package infer

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// statsBatchBytes bounds the requested values' size per batch in
// ChannelStats.
const statsBatchBytes = 256 << 20

// ChannelStats runs m in inference form on the examples idx of split and
// returns, for each named value (a [N, C, …] float tensor computed inside
// the graph), the mean and the biased variance of each channel C over the
// batch and spatial positions, accumulated in float64. It does not change
// m (the values are made outputs of a copy).
func ChannelStats(m *graph.Model, values []string, split *data.Split, idx []int, opts onnxrt.Options,
	batch int) (mean, variance [][]float64, err error) {
	if batch <= 0 || len(idx) == 0 || len(values) == 0 {
		return nil, nil, fmt.Errorf("eval: channel statistics need values, examples and a batch size")
	}
	in, _, err := ModelInput(m)
	if err != nil {
		return nil, nil, err
	}
	cp, err := inferenceCopy(m)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range values {
		v := cp.Graph.LocalValue(name)
		if v == nil {
			return nil, nil, fmt.Errorf("eval: channel statistics: no value %q", name)
		}
		if v.Type == nil {
			v.Type = &graph.Type{DType: graph.Float}
		}
		cp.Graph.Outputs = append(cp.Graph.Outputs, v)
	}
	sess, err := onnxrt.NewSessionForModel(cp, []string{in.Name}, values, opts)
	if err != nil {
		return nil, nil, err
	}
	defer sess.Close()
	sum := make([][]float64, len(values))
	sq := make([][]float64, len(values))
	count := make([]float64, len(values))
	sh := split.Shape()
	per := sh[0] * sh[1] * sh[2]
	x := make([]float32, min(batch, len(idx))*per)
	// The first batch holds one example; its outputs' size sets the
	// batch for the rest so that the requested values of a batch stay
	// under statsBatchBytes (every convolution's output of a ResNet-50
	// at 224×224 is some 40 MB per example).
	step, firstBytes := 1, int64(0)
	for start := 0; start < len(idx); start += step {
		if start == 1 {
			step = int(max(1, min(int64(batch), statsBatchBytes/max(firstBytes, 1))))
		}
		b := idx[start:min(start+step, len(idx))]
		if err := split.Batch(x[:len(b)*per], b); err != nil {
			return nil, nil, err
		}
		t, err := onnxrt.NewFloat32([]int64{int64(len(b)), int64(sh[0]), int64(sh[1]), int64(sh[2])}, x[:len(b)*per])
		if err != nil {
			return nil, nil, err
		}
		outs := make([]*onnxrt.Tensor, len(values))
		err = sess.Run([]*onnxrt.Tensor{t}, outs)
		t.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("eval: channel statistics: %w", err)
		}
		for i, o := range outs {
			s := o.Shape()
			if len(s) < 2 || s[0] != int64(len(b)) || o.DType() != graph.Float {
				o.Close()
				return nil, nil, fmt.Errorf("eval: channel statistics: %q has shape %v (%v), want float [batch, channels, …]",
					values[i], s, o.DType())
			}
			c := int(s[1])
			if sum[i] == nil {
				sum[i], sq[i] = make([]float64, c), make([]float64, c)
			}
			spatial := 1
			for _, d := range s[2:] {
				spatial *= int(d)
			}
			v := o.Float32s()
			if start == 0 {
				firstBytes += 4 * int64(len(v))
			}
			for n := 0; n < len(b); n++ {
				for k := 0; k < c; k++ {
					row := v[(n*c+k)*spatial : (n*c+k+1)*spatial]
					for _, f := range row {
						sum[i][k] += float64(f)
						sq[i][k] += float64(f) * float64(f)
					}
				}
			}
			count[i] += float64(len(b) * spatial)
			o.Close()
		}
	}
	mean, variance = make([][]float64, len(values)), make([][]float64, len(values))
	for i := range values {
		mean[i], variance[i] = make([]float64, len(sum[i])), make([]float64, len(sum[i]))
		for k := range sum[i] {
			mu := sum[i][k] / count[i]
			mean[i][k], variance[i][k] = mu, max(sq[i][k]/count[i]-mu*mu, 0)
		}
	}
	return mean, variance, nil
}
