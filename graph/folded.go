package graph

import (
	"fmt"
	"math"
	"strings"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// FoldedBN describes a graph whose BatchNormalization layers an exporter
// folded into the convolutions before them.
type FoldedBN struct {
	// Convs counts the convolutions whose weight and bias are folded
	// constants; Nodes are those convolutions in graph order.
	Convs int
	Nodes []*Node
	// Example is the first such convolution's weight, e.g. "onnx::Conv_26".
	Example string
}

// DetectFoldedBN recognises PyTorch's default export of a model with
// BatchNormalization: torch.onnx.export in eval mode with constant folding
// (its default) replaces every Conv → BatchNormalization pair by one Conv
// whose weight W·γ/√(σ²+ε) and bias β − μγ/√(σ²+ε) it computes and stores
// under made-up names ("onnx::Conv_<n>"), while parameters it leaves alone
// keep their state_dict names ("fc.weight"). So a graph with no
// BatchNormalization node and a Conv whose weight and bias are both
// initializers named "onnx::Conv_…" was folded; nil otherwise. A model
// that never had normalization keeps "conv.weight"-style names and is not
// reported. Other exporters are not recognised (no false alarm, no note).
//
// The exporter also keeps one copy of equal tensors and feeds the others
// through Identity nodes (UntieIdentityInitializers): in an untrained
// ResNet-18 every folded bias of a stage is zero, one initializer, and
// the other convolutions read it as an Identity output named
// "onnx::Conv_…". Such a bias counts like an initializer, so the count is
// the same before and after untying (inspect and a run's first note read
// the file as it is; the run restores normalization on the untied copy).
func DetectFoldedBN(g *Graph) *FoldedBN {
	var f FoldedBN
	for _, n := range g.nodes {
		if !n.IsDefaultDomain() {
			continue
		}
		switch {
		case n.OpType == ops.BatchNormalization:
			return nil
		case ops.KindOf(n.OpType) == ops.KindConv:
			w, b := n.Input(1), n.Input(2)
			if w == nil || b == nil || !foldedName(w.Name) || !foldedName(b.Name) ||
				g.sharedInit(w) == nil || g.sharedInit(b) == nil {
				continue
			}
			if f.Convs == 0 {
				f.Example = w.Name
			}
			f.Convs++
			f.Nodes = append(f.Nodes, n)
		}
	}
	if f.Convs == 0 {
		return nil
	}
	return &f
}

func foldedName(name string) bool { return strings.HasPrefix(name, "onnx::Conv_") }

// sharedInit returns v when it is an initializer, or the initializer a
// chain of Identity nodes passes on to v where UntieIdentityInitializers
// would untie it (an initializer of g that is not also a graph input);
// nil otherwise.
func (g *Graph) sharedInit(v *Value) *Value {
	if v != nil && v.Init != nil {
		return v
	}
	for v != nil {
		if v.Init != nil {
			if v.graph != g || g.isInput(v) {
				return nil
			}
			return v
		}
		n := v.producer
		if n == nil || n.OpType != ops.Identity || !n.IsDefaultDomain() || len(n.outputs) != 1 {
			return nil
		}
		v = n.Input(0)
	}
	return nil
}

// ReexportAdvice is how to export a PyTorch model so that
// BatchNormalization stays a node of its own with the running statistics
// untouched and the state_dict names kept (README "Exporting from
// PyTorch").
const ReexportAdvice = "torch.onnx.export(model.eval(), x, f, training=torch.onnx.TrainingMode.PRESERVE, " +
	"do_constant_folding=False, dynamic_axes={...}, dynamo=False)"

// Note is the warning a run and inspect print for a folded model.
func (f *FoldedBN) Note() string {
	return fmt.Sprintf("the export folded BatchNormalization into %d convolution(s) (weights with exporter-made "+
		"names such as %s, no BatchNormalization node): the parameters lost their state_dict names, and training "+
		"the folded convolutions without normalization is unstable (a lower learning rate, and on a "+
		"141k-parameter CNN a collapse of test accuracy: regimes/folded-bn); "+
		"re-export with %s (README \"Exporting from PyTorch\")",
		f.Convs, f.Example, ReexportAdvice)
}

// BNEpsilon is the epsilon of the BatchNormalization RestoreBN inserts
// (PyTorch's default).
const BNEpsilon = 1e-5

// RestoredBN is one BatchNormalization RestoreBN put back after a folded
// convolution.
type RestoredBN struct {
	Conv, BN *Node
}

// RestoreBN puts a BatchNormalization back after each of the folded
// convolutions convs (DetectFoldedBN), initialised to the identity in
// inference form: running mean μ and variance σ² are the per-channel
// statistics of the convolution's output (mean[i], variance[i], measured by
// the caller on training data), weight γ = √(σ²+ε) and bias β = μ, so that
// γ(x−μ)/√(σ²+ε)+β = x. In training form (batch statistics) it is close to
// the identity on batches like that data, and it gives finetuning back the
// normalization the export folded away. Its parameters are named
// "<conv weight>.bn.weight" and so on. FoldBackBN undoes it.
func RestoreBN(g *Graph, convs []*Node, mean, variance [][]float64) ([]RestoredBN, error) {
	var out []RestoredBN
	for i, c := range convs {
		w := c.Input(1)
		y := c.Output(0)
		if w == nil || w.Init == nil || len(w.Init.Shape) == 0 || y == nil {
			return nil, fmt.Errorf("graph: restore BatchNormalization after %v: no weight or output", c)
		}
		ch := int(w.Init.Shape[0])
		if len(mean[i]) != ch || len(variance[i]) != ch {
			return nil, fmt.Errorf("graph: restore BatchNormalization after %v: %d channels, statistics for %d",
				c, ch, len(mean[i]))
		}
		gamma, beta, mu, vr := make([]float32, ch), make([]float32, ch), make([]float32, ch), make([]float32, ch)
		for k := 0; k < ch; k++ {
			v := max(variance[i][k], 0)
			mu[k], vr[k] = float32(mean[i][k]), float32(v)
			gamma[k], beta[k] = float32(math.Sqrt(v+BNEpsilon)), float32(mean[i][k])
		}
		base := w.Name + ".bn."
		var ins []*Value
		for _, t := range []struct {
			name string
			v    []float32
		}{{"weight", gamma}, {"bias", beta}, {"running_mean", mu}, {"running_var", vr}} {
			v, err := g.AddInitializer(NewFloat32(base+t.name, []int64{int64(ch)}, t.v))
			if err != nil {
				return nil, err
			}
			ins = append(ins, v)
		}
		uses := append([]Use(nil), y.uses...)
		bn, err := g.AddNode(ops.BatchNormalization, "", c.Name+"/restored_bn", append([]*Value{y}, ins...),
			[]string{y.Name + "/restored_bn"},
			&Attribute{Name: "epsilon", Type: AttrFloat, F: BNEpsilon}, &Attribute{Name: "momentum", Type: AttrFloat, F: 0.9})
		if err != nil {
			return nil, err
		}
		z := bn.Output(0)
		z.Type = y.Type
		for _, u := range uses {
			u.Node.SetInput(u.Index, z)
		}
		for j, o := range g.Outputs {
			if o == y {
				g.Outputs[j] = z
			}
		}
		out = append(out, RestoredBN{Conv: c, BN: bn})
	}
	if err := g.SortTopologically(); err != nil {
		return nil, err
	}
	return out, nil
}

// FoldBackBN folds each restored BatchNormalization into its convolution
// as PyTorch's exporter folds one: for output channel k with s =
// γ/√(σ²+ε), weight W[k]·s and bias (b[k]−μ)·s+β, computed in float64.
// Channels for which keep reports true keep their convolution's weight
// and bias bit for bit (their normalization left as it was restored, the
// identity). The BatchNormalization nodes and their initializers are
// removed, so g has the form it was exported in.
func FoldBackBN(g *Graph, restored []RestoredBN, keep func(conv *Node, channel int) bool) error {
	for _, r := range restored {
		w, b := r.Conv.Input(1), r.Conv.Input(2)
		wv, err := w.Init.Float32s()
		if err != nil {
			return err
		}
		bv, err := b.Init.Float32s()
		if err != nil {
			return err
		}
		var p [4][]float32
		for i := range p {
			if p[i], err = r.BN.Input(i + 1).Init.Float32s(); err != nil {
				return err
			}
		}
		gamma, beta, mu, vr := p[0], p[1], p[2], p[3]
		ch := len(bv)
		per := len(wv) / ch
		nw, nb := append([]float32(nil), wv...), append([]float32(nil), bv...)
		for k := 0; k < ch; k++ {
			if keep != nil && keep(r.Conv, k) {
				continue
			}
			s := float64(gamma[k]) / math.Sqrt(float64(vr[k])+BNEpsilon)
			for j := k * per; j < (k+1)*per; j++ {
				nw[j] = float32(float64(wv[j]) * s)
			}
			nb[k] = float32((float64(bv[k])-float64(mu[k]))*s + float64(beta[k]))
		}
		if err := w.Init.SetFloat32s(nw); err != nil {
			return err
		}
		if err := b.Init.SetFloat32s(nb); err != nil {
			return err
		}
		y, z := r.Conv.Output(0), r.BN.Output(0)
		params := append([]*Value(nil), r.BN.Inputs()[1:]...)
		uses := append([]Use(nil), z.uses...)
		for _, u := range uses {
			u.Node.SetInput(u.Index, y)
		}
		for j, o := range g.Outputs {
			if o == z {
				g.Outputs[j] = y
			}
		}
		if err := g.RemoveNode(r.BN); err != nil {
			return err
		}
		for _, v := range params {
			if err := g.RemoveInitializer(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// TrainingModeBN counts the BatchNormalization nodes in training form
// (training_mode = 1, as torch.onnx.export with TrainingMode.TRAINING
// writes them). PyTorch runs the model in training mode while it traces
// such an export, and that forward pass moves every running mean and
// variance one momentum step towards the dummy batch's statistics before
// they are written: the file holds a slightly different model from the
// one that was exported.
func TrainingModeBN(g *Graph) int {
	n := 0
	for _, nd := range g.nodes {
		if nd.OpType == ops.BatchNormalization && nd.IsDefaultDomain() && nd.AttrInt("training_mode", 0) == 1 {
			n++
		}
	}
	return n
}

// TrainingExportNote is inspect's line for a graph with TrainingModeBN >
// 0. The file alone cannot tell whether the statistics were restored after
// such an export (testdata/make_testdata.py restores them), so it asks the
// user to check rather than claiming they moved; a run does not repeat it.
func TrainingExportNote(n int) string {
	return fmt.Sprintf("%d BatchNormalization node(s) are in training form, as an export with "+
		"training=torch.onnx.TrainingMode.TRAINING writes them: PyTorch runs the model in training mode while "+
		"tracing such an export, which moves every running mean and variance one step towards the dummy input's "+
		"statistics unless they are written back afterwards, so check them against the model's state_dict, or "+
		"re-export with %s (README \"Exporting from PyTorch\"); the tool evaluates and writes the model in "+
		"inference form with the statistics the file holds", n, ReexportAdvice)
}
