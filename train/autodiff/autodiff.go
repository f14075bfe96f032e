package autodiff

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/train/lowering"
)

// BNMode selects how BatchNormalization behaves in the training graph.
type BNMode int

const (
	// BNInference normalizes with the running statistics (PyTorch's eval()).
	BNInference BNMode = iota
	// BNTraining normalizes with the batch statistics (PyTorch's train()) and
	// outputs them for the running-statistics update.
	BNTraining
)

func (m BNMode) String() string {
	if m == BNTraining {
		return "training"
	}
	return "inference"
}

// Loss kinds.
const (
	LossCE = "ce" // L = Σ_i w_i·CE_i / N
	LossKL = "kl" // L = Σ_i w_i·KL(softmax(t_i/T) ‖ softmax(s_i/T))·T² / N
)

// Loss selects the loss the training graph computes from the logits.
type Loss struct {
	Kind        string  // LossCE (default when empty) or LossKL
	Temperature float32 // KL only; 0 means 1
}

// Spec says what to differentiate and how the forward runs.
type Spec struct {
	// Params names the initializers to differentiate; nil means every
	// trainable one (float initializers that reach the logits through
	// differentiable inputs).
	Params []string
	BN     BNMode
	// Dropout true runs Dropout nodes in training mode: the node's seeded
	// mask (its second output) is reused by the gradient. False makes
	// Dropout the identity.
	Dropout bool
	// DropoutSeed is the seed attribute written on Dropout nodes in
	// training mode (the mask differs from run to run of one session, and
	// the sequence is the same for every session).
	DropoutSeed int64
	Loss        Loss
	// Lowering emits the convolutions (the forward Conv, dX and dW) in
	// the forms that suit the device: nil takes lowering.Plain (Conv,
	// ConvTranspose and the convolution trick, which every execution
	// provider runs); package lowering/cpu has ONNX Runtime's CPU forms,
	// which train.EngineSpec chooses on the cpu device.
	Lowering lowering.Lowering
	// Threads is the intra-op thread count the graph will run with (0:
	// unknown, as for exported artifacts), which the Lowering reads
	// (lowering.Emitter.Threads): where ONNX Runtime's kernel for an op
	// runs on one thread or slows down with more, lowering/cpu switches to
	// multithreaded equivalents from the count where they win
	// (BatchNormalization's affine maps from cpu.MulAddThreads, stacks of
	// small transposes from 2).
	Threads int
	// GradChannels, when set, restricts the weight gradient of the named
	// parameters to the listed output channels (ascending, distinct): the
	// axis the consuming op makes the output channel, axis 0 of a Conv
	// weight [M, C/g, k…], of a Gemm B with transB=1, axis 1 of a Gemm B
	// with transB=0 and of a 2-D MatMul B (docs/GRADIENTS.md, "Where the
	// output channel of a weight lies"). Only the slices of dY of those
	// channels enter the weight gradient's product, so a weight with k of
	// its C channels selected costs k/C of its weight gradient. It applies
	// where the parameter feeds one Conv (group 1), Gemm (transA=0) or 2-D
	// MatMul directly and alone; elsewhere the gradient stays whole.
	// Artifacts.GradChannels lists where it applied. nil (the default)
	// leaves every gradient whole and the graph unchanged.
	GradChannels map[string][]int64
}

// IO describes one input or output of the training graph.
type IO struct {
	Name  string
	DType graph.DType
	Shape []int64 // −1 for a dynamic dimension (the batch)
	// Role is one of "images", "labels", "weights", "teacher_logits",
	// "param", "state", "loss", "logits", "grad", "bn_mean", "bn_var".
	Role string
	// Of names the parameter (for "param" and "grad") or the
	// BatchNormalization scale (for "state", "bn_mean", "bn_var").
	Of string
}

// BNStat describes one BatchNormalization node's statistics in BNTraining
// mode: the batch mean and biased variance outputs and the running-stat
// initializers they update. The element count behind the statistics is
// M = N·PerExample, N the batch size; PyTorch's update is
// rm ← 0.9·rm + 0.1·mean, rv ← 0.9·rv + 0.1·var·M/(M−1).
type BNStat struct {
	Node        string // the BatchNormalization node's name
	Scale       string // its scale input
	RunningMean string // initializer names of the running statistics
	RunningVar  string
	MeanOut     string // "bn_mean/<scale>"
	VarOut      string // "bn_var/<scale>"
	PerExample  int64  // ∏ spatial dims, −1 if not static
	Momentum    float32
}

// Artifacts is the generated training graph and the description of its
// inputs and outputs.
type Artifacts struct {
	Model   *graph.Model
	Inputs  []IO
	Outputs []IO
	Params  []string // the differentiated parameters, in input order
	BN      []BNStat // BNTraining mode only
	// GradChannels: the parameters whose gradient output holds only some
	// output channels (Spec.GradChannels), by name; nil when none.
	GradChannels map[string]ChannelGrad

	convForms []string // the forms the Lowering chose (Lowered)

	// Spec is the spec the graph was built with (a training engine on
	// cuda builds it again for each batch size, the batch fixed).
	Spec Spec
}

// Lowered lists the forms the Lowering chose for the graph's
// convolutions, in the order it chose them ("forward:winograd",
// "input:flipped", "input:nchwc", "weight:gemm", "scale:folded" where a
// per-channel factor of dY was folded into the filter).
func (a *Artifacts) Lowered() []string { return slices.Clone(a.convForms) }

// Errors.
var (
	// ErrUnsupported: a node on the path from the parameters to the loss has
	// no gradient rule.
	ErrUnsupported = errors.New("autodiff: unsupported op")
	// ErrModel: the model cannot be turned into a training graph.
	ErrModel = errors.New("autodiff: model")
)

// CheckSupported refuses, before any run, a model whose training graph
// cannot be built: a node on the path from its trainable parameters to its
// output 0 that has no rule (the error names the op and the node), logits
// whose rank the shape inference cannot establish as 2, or a rule that
// cannot handle its node. It is Build with the default Spec, every
// parameter trainable (tens of milliseconds on a 28M-parameter swin_t),
// so that it accepts what training builds and inspect reports what a run
// would meet. Its Conv forms are lowering.Plain's; the CPU lowering's
// forms fall back to the same trick where theirs do not apply, so they
// fail on the same nodes (a grouped Conv without a static output shape).
func CheckSupported(m *graph.Model) error {
	_, err := Build(m, Spec{})
	return err
}

// builds counts Build's calls in this process (Builds).
var builds atomic.Int64

// Builds returns how many training graphs Build has been asked for in this
// process. Building one is among the costliest steps before training a
// large model; tests use it to hold a run to one build per graph.
func Builds() int64 { return builds.Load() }

// planned is what the reverse pass works on.
type planned struct {
	order   []*graph.Node
	params  []*graph.Value
	logits  *graph.Value
	onPath  map[*graph.Node]bool   // nodes the reverse pass visits
	active  map[*graph.Value]bool  // values that need a gradient
	needed  map[*graph.Node]bool   // nodes the forward needs
	diffIdx map[*graph.Node][]bool // per node: inputs that need a gradient
	// unsupported: nodes on the path without a rule (plan then fails)
	unsupported []*graph.Node
}

func isFloatValue(v *graph.Value) bool {
	if v.Init != nil {
		return v.Init.DType.IsFloat()
	}
	if v.Type != nil && v.Type.DType != graph.Undefined {
		return v.Type.DType.IsFloat()
	}
	return true
}

// plan picks the parameters and the nodes on the path from them to output 0.
func plan(g *graph.Graph, names []string) (*planned, error) {
	if len(g.Outputs) == 0 || g.Outputs[0] == nil {
		return nil, fmt.Errorf("%w: the graph has no output", ErrModel)
	}
	order, err := g.Topo()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	p := &planned{order: order, logits: g.Outputs[0], onPath: map[*graph.Node]bool{},
		active: map[*graph.Value]bool{}, needed: map[*graph.Node]bool{}, diffIdx: map[*graph.Node][]bool{}}
	// Nodes the logits need.
	need := map[*graph.Value]bool{p.logits: true}
	for k := len(order) - 1; k >= 0; k-- {
		n := order[k]
		live := false
		for _, o := range n.Outputs() {
			if o != nil && need[o] {
				live = true
			}
		}
		if !live {
			continue
		}
		p.needed[n] = true
		for _, in := range n.Inputs() {
			if in != nil {
				need[in] = true
			}
		}
		for _, a := range n.Attrs {
			if a.G != nil || len(a.Graphs) > 0 {
				return nil, fmt.Errorf("%w: %v has a subgraph; control flow is not supported", ErrUnsupported, n)
			}
		}
	}
	// Backward reachability from the logits along differentiable inputs
	// (unknown ops conservatively pass through every float input, so that
	// they are reported rather than silently cut).
	back := map[*graph.Value]bool{p.logits: true}
	for k := len(order) - 1; k >= 0; k-- {
		n := order[k]
		if !p.needed[n] {
			continue
		}
		reach := false
		for _, o := range n.Outputs() {
			if o != nil && back[o] {
				reach = true
			}
		}
		if !reach {
			continue
		}
		known := supported(n.OpType)
		for i, in := range n.Inputs() {
			if in == nil || !isFloatValue(in) {
				continue
			}
			if (known && n.IsDefaultDomain() && differentiable(n, i)) || !known || !n.IsDefaultDomain() {
				back[in] = true
			}
		}
	}
	// Parameters.
	if names == nil {
		for _, v := range g.Initializers {
			if v.Init != nil && v.Init.DType.IsFloat() && back[v] && !stateOnly(v) {
				p.params = append(p.params, v)
			}
		}
	} else {
		for _, nm := range names {
			v := g.LocalValue(nm)
			if v == nil || v.Init == nil {
				return nil, fmt.Errorf("%w: parameter %q is not an initializer", ErrModel, nm)
			}
			if !v.Init.DType.IsFloat() {
				return nil, fmt.Errorf("%w: parameter %q is %v, not a float tensor", ErrModel, nm, v.Init.DType)
			}
			p.params = append(p.params, v)
		}
	}
	// Forward reachability from the parameters.
	fwd := map[*graph.Value]bool{}
	for _, v := range p.params {
		fwd[v] = true
	}
	for _, n := range order {
		if !p.needed[n] {
			continue
		}
		var idx []bool
		any := false
		for i, in := range n.Inputs() {
			if in != nil && fwd[in] && back[in] {
				if idx == nil {
					idx = make([]bool, len(n.Inputs()))
				}
				idx[i] = true
				any = true
			}
		}
		if !any {
			continue
		}
		reach := false
		for _, o := range n.Outputs() {
			if o != nil && back[o] {
				reach = true
			}
		}
		if !reach {
			continue
		}
		if !supported(n.OpType) || !n.IsDefaultDomain() {
			p.unsupported = append(p.unsupported, n)
			// Keep going: every offending node is reported at once.
			for _, o := range n.Outputs() {
				if o != nil && back[o] {
					fwd[o] = true
				}
			}
			continue
		}
		p.onPath[n] = true
		p.diffIdx[n] = idx
		for i, in := range n.Inputs() {
			if idx[i] {
				p.active[in] = true
			}
		}
		for _, o := range n.Outputs() {
			if o != nil && back[o] {
				fwd[o] = true
			}
		}
	}
	if len(p.unsupported) > 0 {
		n := p.unsupported[0]
		dom := ""
		if !n.IsDefaultDomain() {
			dom = " (domain " + n.Domain + ")"
		}
		more := ""
		if k := len(p.unsupported) - 1; k > 0 {
			more = fmt.Sprintf(" (and %d more node(s) without a rule)", k)
		}
		return p, fmt.Errorf("%w: %s%s at %v has no gradient rule%s; supported: %s",
			ErrUnsupported, n.OpType, dom, n, more, strings.Join(gradOps(), ", "))
	}
	return p, nil
}

// UnsupportedNodes lists, in topological order, the nodes on the path from
// the trainable parameters to output 0 that have no gradient rule (an empty
// list: the model can be trained). The error is for models that cannot be
// analysed at all (e.g. control flow).
func UnsupportedNodes(m *graph.Model) ([]*graph.Node, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("%w: no graph", ErrModel)
	}
	p, err := plan(m.Graph, nil)
	if p != nil {
		return p.unsupported, nil
	}
	return nil, err
}

// stateOnly reports whether v is used only as BatchNormalization running
// statistics (never trainable).
func stateOnly(v *graph.Value) bool {
	for _, u := range v.Uses() {
		if !(u.Node.OpType == ops.BatchNormalization && (u.Index == 3 || u.Index == 4)) {
			return false
		}
	}
	return len(v.Uses()) > 0
}

// Build generates the training graph of m (which is not modified).
//
// Inputs, in order: the forward graph's non-initializer inputs (the
// images), "labels" (int64 [N]), "weights" (float [N]), "teacher_logits"
// ([N, C], LossKL only), every parameter under its initializer name, and in
// BNInference mode the running statistics of every BatchNormalization node
// (state the Go side updates). Outputs: "loss" (scalar), the logits under
// the forward output's name, "grad/<param>" per parameter, and in
// BNTraining mode "bn_mean/<scale>" and "bn_var/<scale>" per
// BatchNormalization (see BNStat). The loss has shape [1] (onnxruntime_go
// cannot bind 0-d tensors).
func Build(m *graph.Model, spec Spec) (a *Artifacts, err error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("%w: no graph", ErrModel)
	}
	builds.Add(1)
	defer func() {
		if r := recover(); r != nil {
			if bo, ok := r.(bailout); ok {
				a, err = nil, bo.err
				return
			}
			panic(r)
		}
	}()
	return build(m, spec, false)
}

// build is Build; with seedMode the loss is replaced by ⟨seed, output 0⟩
// for a seed input "seed" shaped like the output (the rule tests use it).
func build(m *graph.Model, spec Spec, seedMode bool) (*Artifacts, error) {
	orig := m.Graph
	ver := m.Opset("")
	if ver < 13 {
		return nil, fmt.Errorf("%w: ai.onnx opset %d; export at opset 13 or later", ErrModel, ver)
	}
	switch spec.Loss.Kind {
	case "", LossCE, LossKL:
	default:
		return nil, fmt.Errorf("%w: unknown loss %q (want %q or %q)", ErrModel, spec.Loss.Kind, LossCE, LossKL)
	}
	if c, ok := spec.Lowering.(lowering.Checker); ok {
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrModel, err)
		}
	}
	if err := checkChannelSpec(orig, spec); err != nil {
		return nil, err
	}
	p, err := plan(orig, spec.Params)
	if err != nil {
		return nil, err
	}
	opset := max(ver, 17)
	b := newBuilder(orig, opset, spec)
	art := &Artifacts{Spec: spec}

	reserve := func(name string) string {
		if b.used[name] {
			b.fail("%w: the model already has a value named %q", ErrModel, name)
		}
		b.used[name] = true
		return name
	}
	isParam := map[*graph.Value]bool{}
	for _, v := range p.params {
		isParam[v] = true
	}

	// Inputs: images.
	for _, in := range orig.Inputs {
		if in.Init != nil {
			continue
		}
		used := false
		for _, u := range in.Uses() {
			if p.needed[u.Node] {
				used = true
			}
		}
		if !used && in != p.logits {
			continue
		}
		t := &graph.Type{DType: graph.Float}
		if in.Type != nil {
			t = &graph.Type{DType: in.Type.DType, Shape: append([]graph.Dim{}, in.Type.Shape...)}
		}
		v, err := b.g.AddInput(in.Name, t)
		if err != nil {
			b.fail("%w: %v", ErrModel, err)
		}
		b.vmap[in] = v
		b.ti(v)
		art.Inputs = append(art.Inputs, ioOf(v, "images", ""))
	}
	logitsT := b.ti(p.logits) // type from the forward's annotation, if any
	ldt := logitsT.DType
	if ldt == graph.Undefined {
		ldt = graph.Float
	}
	var labels, weights, teacher, seed *graph.Value
	batchDim := graph.Dim{Size: -1, Param: "batch"}
	if seedMode {
		seed = b.addInput(reserve("seed"), &graph.Type{DType: ldt}, "seed", "", art)
	} else {
		labelsT := &graph.Type{DType: graph.Int64, Shape: []graph.Dim{batchDim}}
		labels = b.addInput(reserve("labels"), labelsT, "labels", "", art)
		weights = b.addInput(reserve("weights"), &graph.Type{DType: ldt, Shape: []graph.Dim{batchDim}}, "weights", "", art)
		if spec.Loss.Kind == LossKL {
			var sh []graph.Dim
			if p.logits.Type != nil {
				sh = p.logits.Type.Shape
			}
			teacher = b.addInput(reserve("teacher_logits"), &graph.Type{DType: ldt, Shape: sh}, "teacher_logits", "", art)
		}
	}
	// Parameters become inputs.
	for _, v := range p.params {
		art.Params = append(art.Params, v.Name)
		t := &graph.Type{DType: v.Init.DType, Shape: graph.DimsOf(v.Init.Shape)}
		b.vmap[v] = b.addInput(v.Name, t, "param", v.Name, art)
	}
	// BN running statistics become inputs in inference mode.
	if spec.BN == BNInference {
		for _, n := range p.order {
			if !p.needed[n] || n.OpType != ops.BatchNormalization {
				continue
			}
			for _, i := range []int{3, 4} {
				v := n.Input(i)
				if v == nil || v.Init == nil || isParam[v] || b.vmap[v] != nil {
					continue
				}
				t := &graph.Type{DType: v.Init.DType, Shape: graph.DimsOf(v.Init.Shape)}
				b.vmap[v] = b.addInput(v.Name, t, "state", n.Input(1).Name, art)
			}
		}
	}
	// Other initializers the forward needs stay initializers.
	for _, v := range orig.Initializers {
		if b.vmap[v] != nil {
			continue
		}
		usedBy := false
		for _, u := range v.Uses() {
			if p.needed[u.Node] {
				usedBy = true
			}
		}
		if !usedBy {
			continue
		}
		nv, err := b.g.AddInitializer(v.Init)
		if err != nil {
			b.fail("%w: %v", ErrModel, err)
		}
		b.vmap[v] = nv
	}

	// Forward.
	for _, n := range p.order {
		if !p.needed[n] {
			continue
		}
		b.forward(n, p)
		b.declared(n)
	}
	logits := b.mapped(p.logits)

	// Loss and the gradient of the logits.
	outputs := []*graph.Value{}
	var dLogits *graph.Value
	if seedMode {
		dLogits = seed
		prodv := b.mul(logits, seed)
		loss := b.reshape(b.op1("ReduceSum", []*graph.Value{prodv}, aI("keepdims", 0)), []int64{1})
		outputs = append(outputs, b.identityAs(loss, reserve("loss")))
	} else {
		var loss *graph.Value
		loss, dLogits = b.loss(logits, labels, weights, teacher, reserve("loss"))
		outputs = append(outputs, loss)
	}
	art.Outputs = append(art.Outputs, ioOf(outputs[0], "loss", ""))
	outputs = append(outputs, logits)
	art.Outputs = append(art.Outputs, ioOf(logits, "logits", ""))

	// Reverse pass.
	grads := map[*graph.Value][]*graph.Value{}
	if p.active[p.logits] || len(p.onPath) > 0 || isParam[p.logits] {
		grads[p.logits] = []*graph.Value{dLogits}
	}
	sum := func(v *graph.Value) *graph.Value {
		gs := grads[v]
		switch len(gs) {
		case 0:
			return nil
		case 1:
			return gs[0]
		}
		// A chain of Adds rather than one Sum: ONNX Runtime runs Sum on one
		// thread and Add on its thread pool (bench/RESULTS.md, "A 16-core
		// Xeon: thread scaling").
		s := gs[0]
		for _, g := range gs[1:] {
			s = b.add(s, g)
		}
		grads[v] = []*graph.Value{s}
		return s
	}
	for k := len(p.order) - 1; k >= 0; k-- {
		n := p.order[k]
		if !p.onPath[n] {
			continue
		}
		c := &GradCtx{b: b, n: n, fn: b.fwdNodes[n], need: p.diffIdx[n], aux: b.aux[n]}
		for _, in := range n.Inputs() {
			c.in = append(c.in, b.mappedOrNil(in))
		}
		for _, o := range n.Outputs() {
			c.out = append(c.out, b.mappedOrNil(o))
			if o != nil {
				d := sum(o)
				if d != nil {
					b.refine(d, b.vmap[o])
				}
				c.dY = append(c.dY, d)
			} else {
				c.dY = append(c.dY, nil)
			}
		}
		hasGrad := false
		for _, d := range c.dY {
			if d != nil {
				hasGrad = true
			}
		}
		if !hasGrad {
			continue
		}
		dx := gradOf(n.OpType)(c)
		for i, need := range c.need {
			if !need {
				continue
			}
			if i >= len(dx) || dx[i] == nil {
				b.fail("autodiff: rule for %v gave no gradient for input %d (%q)", n, i, n.Input(i).Name)
			}
			if _, part := b.partial[dx[i]]; !part {
				b.checkGrad(n, i, dx[i], c.in[i])
				b.refine(dx[i], c.in[i])
			}
			grads[n.Input(i)] = append(grads[n.Input(i)], dx[i])
		}
	}
	// Parameter gradients.
	for _, v := range p.params {
		g := sum(v)
		name := reserve("grad/" + v.Name)
		var out *graph.Value
		if g == nil {
			out = b.identityAs(b.constT(zerosTensor(v.Init)), name)
		} else {
			out = b.identityAs(g, name)
			if cg, ok := b.partial[g]; ok {
				if art.GradChannels == nil {
					art.GradChannels = map[string]ChannelGrad{}
				}
				art.GradChannels[v.Name] = cg
			}
		}
		outputs = append(outputs, out)
		art.Outputs = append(art.Outputs, ioOf(out, "grad", v.Name))
	}
	for i := range b.bnStats {
		st := &b.bnStats[i]
		for _, pair := range []struct {
			name, role string
		}{{st.MeanOut, "bn_mean"}, {st.VarOut, "bn_var"}} {
			v := b.g.LocalValue(pair.name)
			outputs = append(outputs, v)
			art.Outputs = append(art.Outputs, ioOf(v, pair.role, st.Scale))
		}
	}
	art.BN = b.bnStats
	art.convForms = b.convForms
	for _, o := range outputs {
		t := b.ti(o)
		if o.Type == nil {
			o.Type = &graph.Type{DType: t.DType}
			if t.Shape != nil {
				o.Type.Shape = make([]graph.Dim, len(t.Shape))
				for i, d := range t.Shape {
					if d >= 0 {
						o.Type.Shape[i] = graph.Dim{Size: d}
					} else {
						o.Type.Shape[i] = graph.Dim{Size: -1}
					}
				}
			}
		}
	}
	if f, ok := b.lower().(lowering.Finisher); ok {
		f.Finish(emitter{b}, b.g, outputs)
	}
	b.g.Outputs = outputs
	if err := b.g.Validate(); err != nil {
		return nil, fmt.Errorf("autodiff: generated graph is invalid: %w", err)
	}
	tm := &graph.Model{
		Graph: b.g, IRVersion: max(m.IRVersion, 8), ProducerName: "unlearn-autodiff",
		Opsets: opsets(m, opset, b.domains),
		Doc:    fmt.Sprintf("training graph of %q (BN %v, loss %s)", orig.Name, spec.BN, lossName(spec.Loss)),
	}
	art.Model = tm
	// IO descriptions from the final types.
	for i := range art.Outputs {
		art.Outputs[i] = ioOf(outputs[i], art.Outputs[i].Role, art.Outputs[i].Of)
	}
	return art, nil
}

func lossName(l Loss) string {
	if l.Kind == "" {
		return LossCE
	}
	return l.Kind
}

func zerosTensor(t *graph.Tensor) *graph.Tensor {
	return &graph.Tensor{DType: t.DType, Shape: append([]int64{}, t.Shape...), Raw: make([]byte, len(t.Raw))}
}

func (b *builder) mappedOrNil(v *graph.Value) *graph.Value {
	if v == nil {
		return nil
	}
	return b.vmap[v]
}

func (b *builder) addInput(name string, t *graph.Type, role, of string, art *Artifacts) *graph.Value {
	v, err := b.g.AddInput(name, t)
	if err != nil {
		b.fail("%w: %v", ErrModel, err)
	}
	b.used[name] = true
	b.ti(v)
	art.Inputs = append(art.Inputs, ioOf(v, role, of))
	return v
}

// identityAs copies v into a new value with the given (reserved) name.
func (b *builder) identityAs(v *graph.Value, name string) *graph.Value {
	return b.emit("Identity", []*graph.Value{v}, []string{name}).Output(0)
}

func ioOf(v *graph.Value, role, of string) IO {
	io := IO{Name: v.Name, Role: role, Of: of}
	if v.Type != nil {
		io.DType = v.Type.DType
		if v.Type.Shape != nil {
			io.Shape = make([]int64, len(v.Type.Shape))
			for i, d := range v.Type.Shape {
				if d.Known() {
					io.Shape[i] = d.Size
				} else {
					io.Shape[i] = -1
				}
			}
		}
	}
	return io
}

// checkGrad verifies that a rule's gradient has the input's shape where
// both are known, naming the node when a rule is wrong.
func (b *builder) checkGrad(n *graph.Node, i int, g, x *graph.Value) {
	gs, xs := b.shape(g), b.shape(x)
	if gs == nil || xs == nil {
		return
	}
	if len(gs) != len(xs) {
		b.fail("autodiff: rule for %v: gradient of input %d has rank %d, the input has rank %d", n, i, len(gs), len(xs))
	}
	for k := range gs {
		if gs[k] >= 0 && xs[k] >= 0 && gs[k] != xs[k] {
			b.fail("autodiff: rule for %v: gradient of input %d has shape %v, the input %v", n, i, gs, xs)
		}
	}
	if gd, xd := b.dtype(g), b.dtype(x); gd != graph.Undefined && xd != graph.Undefined && gd != xd {
		b.fail("autodiff: rule for %v: gradient of input %d is %v, the input %v", n, i, gd, xd)
	}
}

// opsets returns the training graph's imports: ai.onnx at opset, plus the
// original model's other domains.
func opsets(m *graph.Model, opset int64, domains map[string]int64) []graph.OpsetImport {
	out := []graph.OpsetImport{{Domain: "", Version: opset}}
	for _, o := range m.Opsets {
		if _, lowered := domains[o.Domain]; o.Domain != "" && o.Domain != "ai.onnx" && !lowered {
			out = append(out, o)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(domains)) {
		out = append(out, graph.OpsetImport{Domain: d, Version: domains[d]})
	}
	return out
}

// refine gives the gradient g the static shape of its primal x where g's
// own inferred shape knows less (a gradient always has its primal's shape).
func (b *builder) refine(g, x *graph.Value) {
	gt, xt := b.ti(g), b.ti(x)
	if xt.Shape == nil {
		return
	}
	if gt.Shape != nil && len(gt.Shape) == len(xt.Shape) {
		better := false
		for i := range gt.Shape {
			if gt.Shape[i] < 0 && xt.Shape[i] >= 0 {
				better = true
			}
		}
		if !better {
			return
		}
	} else if gt.Shape != nil {
		return
	}
	b.types.Set(g, &shapes.Info{DType: gt.DType, Shape: append([]int64{}, xt.Shape...)})
}
