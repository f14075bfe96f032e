package infer

import (
	"errors"
	"fmt"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
)

// Classifier runs a model's forward pass in inference mode on batches of a
// dataset and returns logits.
type Classifier struct {
	sess    *onnxrt.Session
	input   string
	output  string
	shape   []int64 // input shape with -1 for dynamic dims
	classes int
	batch   int
}

// ModelInput returns the single data input of a model (graph inputs that are
// not initializers) and its static shape (-1 where dynamic).
func ModelInput(m *graph.Model) (*graph.Value, []int64, error) {
	var ins []*graph.Value
	for _, v := range m.Graph.Inputs {
		if !v.IsInitializer() {
			ins = append(ins, v)
		}
	}
	if len(ins) != 1 {
		names := make([]string, len(ins))
		for i, v := range ins {
			names[i] = v.Name
		}
		return nil, nil, fmt.Errorf("model has %d data inputs %v; a classifier takes exactly one image tensor",
			len(ins), names)
	}
	in := ins[0]
	if in.Type == nil || in.Type.Shape == nil {
		return nil, nil, fmt.Errorf("model input %q has no shape", in.Name)
	}
	if in.Type.DType != graph.Float {
		return nil, nil, fmt.Errorf("model input %q is %v; only float32 image inputs are supported", in.Name, in.Type.DType)
	}
	shape := make([]int64, len(in.Type.Shape))
	for i, d := range in.Type.Shape {
		if d.Known() {
			shape[i] = d.Size
		} else {
			shape[i] = -1
		}
	}
	if len(shape) != 4 {
		return nil, nil, fmt.Errorf("model input %q has shape %v; expected [N, C, H, W]", in.Name, in.Type.Shape)
	}
	return in, shape, nil
}

// ModelOutput returns the model's output, the logits, after checking what
// the model declares about it: a classifier has exactly one output (with
// several, which one holds the logits would be a guess), and where its type
// is declared it is float32 of rank 2, [N, classes].
func ModelOutput(m *graph.Model) (*graph.Value, error) {
	outs := m.Graph.Outputs
	if len(outs) != 1 {
		names := make([]string, len(outs))
		for i, v := range outs {
			names[i] = v.Name
		}
		return nil, fmt.Errorf("model has %d outputs %v; a classifier has exactly one, the logits [N, classes]",
			len(outs), names)
	}
	out := outs[0]
	if t := out.Type; t != nil {
		if t.DType != graph.Undefined && t.DType != graph.Float {
			return nil, fmt.Errorf("model output %q is %v; a classifier outputs float32 logits [N, classes]", out.Name, t.DType)
		}
		if t.Shape != nil && len(t.Shape) != 2 {
			return nil, fmt.Errorf("model output %q has shape %v; a classifier outputs logits [N, classes]", out.Name, t.Shape)
		}
	}
	return out, nil
}

// NewClassifier prepares m for inference: training-mode nodes are switched to
// inference form and a fixed batch is made symbolic (graph.MakeBatchSymbolic)
// on a copy (m itself is not modified), and a session is created.
func NewClassifier(m *graph.Model, opts onnxrt.Options, batch int) (*Classifier, error) {
	if batch <= 0 {
		return nil, errors.New("batch size must be positive")
	}
	in, shape, err := ModelInput(m)
	if err != nil {
		return nil, err
	}
	out, err := ModelOutput(m)
	if err != nil {
		return nil, err
	}
	classes := -1
	if out.Type != nil && len(out.Type.Shape) == 2 && out.Type.Shape[1].Known() {
		classes = int(out.Type.Shape[1].Size)
	}
	im, err := inferenceModel(m)
	if err != nil {
		return nil, err
	}
	sess, err := onnxrt.NewSessionForModel(im, []string{in.Name}, []string{out.Name}, opts)
	if err != nil {
		return nil, err
	}
	return &Classifier{sess: sess, input: in.Name, output: out.Name, shape: shape, classes: classes, batch: batch}, nil
}

// inferenceModel returns m in inference form with a batch of any size
// without touching m: m itself when no node is in training form and the
// batch is not fixed, else a copy switched by graph.InferenceForm and
// graph.MakeBatchSymbolic (onnxio.Clone: also for a model over 2 GB).
func inferenceModel(m *graph.Model) (*graph.Model, error) {
	fixed, err := graph.FixedBatch(m.Graph)
	if err != nil {
		return nil, err
	}
	if fixed == 0 && !graph.HasTrainingForm(m.Graph) {
		return m, nil
	}
	return inferenceCopy(m)
}

// inferenceCopy is a copy of m (onnxio.Clone) in inference form with a
// batch of any size.
func inferenceCopy(m *graph.Model) (*graph.Model, error) {
	cp, err := onnxio.Clone(m)
	if err != nil {
		return nil, err
	}
	if _, err := graph.InferenceForm(cp.Graph); err != nil {
		return nil, err
	}
	if _, err := graph.MakeBatchSymbolic(cp.Graph); err != nil {
		return nil, err
	}
	return cp, nil
}

// Close releases the session.
func (c *Classifier) Close() error { return c.sess.Close() }

// InputShape returns the model's input shape (-1 for dynamic dimensions).
func (c *Classifier) InputShape() []int64 { return c.shape }

// Classes returns the number of classes (from the first batch if the model's
// output shape did not say).
func (c *Classifier) Classes() int { return c.classes }

// Logits runs the examples idx of split and returns their logits, row-major
// [len(idx), classes]. progress, if not nil, is called after every batch.
func (c *Classifier) Logits(split *data.Split, idx []int, progress func(done, total int)) ([]float32, error) {
	sh := split.Shape()
	per := sh[0] * sh[1] * sh[2]
	var out []float32
	// A batch never holds more than the examples asked for, so a huge
	// --batch-size allocates only what the data needs.
	x := make([]float32, min(c.batch, len(idx))*per)
	for start := 0; start < len(idx); start += c.batch {
		end := min(start+c.batch, len(idx))
		b := idx[start:end]
		split.Batch(x[:len(b)*per], b)
		inShape := []int64{int64(len(b)), int64(sh[0]), int64(sh[1]), int64(sh[2])}
		in, err := onnxrt.NewFloat32(inShape, x[:len(b)*per])
		if err != nil {
			return nil, err
		}
		outs := []*onnxrt.Tensor{nil}
		err = c.sess.Run([]*onnxrt.Tensor{in}, outs)
		in.Close()
		if err != nil {
			return nil, fmt.Errorf("forward pass on examples %d..%d: %w", start, end-1, err)
		}
		o := outs[0]
		osh := o.Shape()
		if len(osh) != 2 || osh[0] != int64(len(b)) || o.DType() != graph.Float {
			o.Close()
			return nil, fmt.Errorf("model output %q has shape %v (%v); a classifier must output float32 logits [batch, classes]",
				c.output, osh, o.DType())
		}
		if c.classes < 0 {
			c.classes = int(osh[1])
		} else if int(osh[1]) != c.classes {
			o.Close()
			return nil, fmt.Errorf("model output %q has %d classes, expected %d", c.output, osh[1], c.classes)
		}
		if out == nil {
			out = make([]float32, 0, len(idx)*c.classes)
		}
		out = append(out, o.Float32s()...)
		o.Close()
		if progress != nil {
			progress(end, len(idx))
		}
	}
	return out, nil
}

// Argmax returns the index of the largest logit of each row.
func Argmax(logits []float32, classes int) []int {
	n := len(logits) / classes
	out := make([]int, n)
	for i := 0; i < n; i++ {
		row := logits[i*classes : (i+1)*classes]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// Accuracy returns the fraction of examples whose argmax equals the label.
func Accuracy(pred []int, labels []int) float64 {
	if len(pred) == 0 {
		return 0
	}
	ok := 0
	for i, p := range pred {
		if p == int(labels[i]) {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}
