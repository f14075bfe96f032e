// Package graph is the protobuf-free intermediate representation of an ONNX
// model and the model analysis built on it: trainable parameters, their
// grouping into layers and output channels (neurons), layer depth and the
// classifier layer. It never imports protobuf code (onnxio converts) and never
// runs a model. docs/GRADIENTS.md "Where the output channel of a weight lies"
// and docs/DESIGN.md "Architecture" say how the rest of the tool uses it.
//
// # IR invariants
//
// A Value is a graph input, an initializer (Init != nil) or a node output; it
// knows its producer (node and output index) and its uses (node and input
// index). The mutators on Graph and Node (AddNode, SetInput,
// ReplaceAllUsesWith, RemoveNode, RemoveInitializer) keep producer links and
// use lists right; Inputs() and Uses() return slices that must not be
// modified. Graph.Validate checks:
//   - every node input is defined in the node's graph or an enclosing graph,
//     and every use list matches the inputs in both directions (no missing and
//     no stale uses, no uses by removed nodes);
//   - every node output's producer link points back at the node;
//   - every value is stored under its own name, and no subgraph redefines a
//     name of an enclosing graph (ONNX's SSA rule across scopes);
//   - initializers hold data matching their shape and type; graph inputs,
//     initializers and outputs are defined;
//   - the graph is acyclic (Topo succeeds), recursively for subgraphs.
//
// Names: value names are unique in a graph and, per ONNX, across nested
// graphs. FreshName(base) returns base or base_N, a name that no value and no
// node of the whole tree of graphs (the root, everything nested in it, and the
// caller's own chain) uses or that FreshName handed out before, and reserves
// it. Use it for every value and node a pass adds.
//
// Order: Nodes() is the stored order (file order after decoding). Topo
// returns a topological order that keeps stored order among ready nodes; a
// node holding a subgraph depends on the producers of every outer value the
// subgraph uses, as an input or as a subgraph output. On a cycle it fails and
// names the nodes on the cycle. RemoveNode refuses while an output is used or
// is a graph output; RemoveInitializer likewise.
//
// Tensors keep data as little-endian raw bytes (ONNX raw_data layout). Ext
// fields belong to onnxio.
//
// # Trainable parameters
//
// Parameters(g) returns, in initializer order, the float initializers of g
// that feed a differentiable input of a node whose output reaches a graph
// output along differentiable inputs. Identity, Cast-to-float and Transpose
// nodes are looked through: an initializer behind them (PyTorch's exporter
// puts shared weights behind Identity, and in TRAINING mode without constant
// folding feeds nn.Linear weights to MatMul through a Transpose) counts for
// its eventual consumers, which are listed in Param.Consumers (so
// Consumers[i].Node.Input(Consumers[i].Index) may be the Identity's output).
// Which inputs are differentiable is the op table of package graph/ops, keyed
// by op_type (IsDifferentiableInput), which train/autodiff's registry of
// gradient rules shares: Conv/ConvTranspose/Gemm X, W, B; MatMul,
// Add, Sub, Mul, Div, Concat, PRelu, Sum, Max, Min, Einsum every input;
// BatchNormalization, LayerNormalization, InstanceNormalization,
// GroupNormalization X, scale, B (never the running statistics); Where inputs
// 1 and 2; Gather, Reshape, Expand, Slice, Pad, Pow, Clip, Transpose, Squeeze,
// Unsqueeze, Flatten, Identity, Cast to float, activations, pooling and
// reductions input 0 only. Ops the table lists without differentiable input
// (Shape, comparisons, Floor, ArgMax, …), ops it does not list and ops of
// other domains pass no gradient. So integer
// initializers, and float ones used only as shapes, indices, exponents, clip
// bounds, or in shape arithmetic, are not parameters.
//
// Param.Kind: "weight" (Conv/ConvTranspose W, Gemm A or B, MatMul operand, RNN
// weights), "bias" (input 2 of Conv/ConvTranspose/Gemm, RNN B, an Add operand
// whose other operand a layer op produces), "norm_scale" / "norm_bias"
// (input 1 / 2 of a normalization, or the scale and shift of a decomposed
// normalization, below), "embedding" (Gather's data), "other"; with
// several consumers the first kind in that order wins.
//
// UntieIdentityInitializers replaces each Identity whose input is an
// initializer by a copy of that initializer named after the Identity's output
// (the state_dict name), so that parameters PyTorch's exporter merged become
// separate again; run it before the analysis. Without it a tied tensor is one
// parameter and belongs to the first layer that claims it.
//
// # Layers and neurons
//
// Neurons(g) partitions every element of every trainable parameter into
// exactly one neuron (NeuronMap.CheckPartition verifies it). A neuron is one
// output channel of a Layer; a Layer is a list of Members (parameter tensor,
// channel axis) that share the channels. Layers are made in three passes:
//
//  1. Layer ops claim their weights, in topological order. The consuming op
//     decides the channel axis, not the tensor's rank:
//     Conv W[M, C/g, k…]: axis 0.
//     ConvTranspose W[Ci, Co/g, k…]: axis 1; with group g > 1 the layer has
//     g·(Co/g) channels and channel q·(Co/g)+j owns W[q·Ci/g:(q+1)·Ci/g, j, …]
//     (Member.Groups).
//     Gemm B: axis 0 if transB=1 (PyTorch's nn.Linear), else axis 1; if B is no
//     free parameter, Gemm A: axis 0 if transA=0, else axis 1.
//     MatMul with an initializer B of rank r ≥ 2: axis r−1 (N); else with an
//     initializer A of rank r ≥ 2: axis r−2 (M).
//     Gemm and MatMul weights may come through Transpose nodes; the axis is
//     mapped back through the permutation (MatMul(x, Transpose(W[N,K])):
//     axis 0 of W).
//     A weight already claimed (a tensor shared by two layer ops) stays with
//     the first op; the second op makes no layer.
//  2. Each layer collects, if they are free parameters whose size on the
//     channel axis equals the layer's channel count:
//     - the bias input of Conv/ConvTranspose (shape [M], axis 0) or Gemm
//     (C, broadcast from the right against Y: its axis on Y's channel axis);
//     - the other operand of an Add that directly consumes the layer op's
//     output, when it is per-channel (every other dimension is 1), broadcast
//     from the right (PyTorch's MatMul + Add for nn.Linear on 3-D input);
//     - scale and shift of a BatchNormalization or InstanceNormalization that
//     directly consumes the layer op's output or that Add, when the layer's
//     channel axis is axis 1 of the activation (Conv, ConvTranspose, Gemm;
//     MatMul only when the activation's rank is known);
//     - scale and shift of a LayerNormalization (scale only for
//     RMSNormalization) in the same position, broadcast from the right (the
//     layer's channel axis must be a normalized trailing axis).
//     "Directly" means no other node in between (not even an activation).
//  3. Every parameter still free forms a standalone layer (Layer.Standalone):
//     a normalization's scale and shift together (the scale first) when they
//     split into the same channels, otherwise each parameter alone. A
//     normalization decomposed into primitives (LayerNormalization below
//     opset 17) is recognised by structure: Mul(Div(Sub(x, ReduceMean(x)), ·),
//     scale) followed by Add(·, shift) of the same shape; its scale and shift
//     form one standalone layer with roles norm_scale and norm_bias (it is
//     never attached to a preceding layer). The
//     channel axis of a standalone tensor is its last axis whose size is not
//     1 (axis 0 if every size is 1; a rank-0 tensor is a single channel): for
//     a 1-D tensor each element is a channel; for the cls token [1,1,D], the
//     positional embedding [1,T,D] or an embedding table [V,D] the channels
//     run along the embedding dimension D.
//
// Known limits: a float initializer that is a differentiable operand (for
// instance a decomposed normalization's epsilon stored as an initializer
// rather than a Constant node) is a parameter; PyTorch writes such constants
// as Constant nodes, which are never parameters.
//
// Layer.Name is the weight's name (a standalone layer: its first member's).
// Layer.Op is the weight's consuming layer op; for a standalone layer the
// normalization node, or the parameter's first consumer in topological order.
// Layers are ordered by the topological position of Op. Neurons are listed
// layer by layer (NeuronMap.Neurons[l.First+c]); every neuron of a layer has
// the same number of parameters. Member.Elements(c), Member.Indices(c) and
// NeuronMap.ElementsOf(l, c) give the flat (row-major) indices a channel owns;
// Member.ChannelOf and NeuronMap.NeuronOf invert that.
//
// # Depth and classifier
//
// Layer.Depth is the number of layer ops (the Op of any layer, standalone
// ones included) on the longest path from a graph input or initializer to the
// layer's Op that follows differentiable inputs only, not counting Op itself:
// the first layer has depth 0, and a residual block's shortcut conv has the
// depth of its first conv. Shape computations do not add depth. Deepest-k and
// Shallowest-k strategies rank layers by it (LayersByDepth).
//
// The classifier (NeuronMap.Classifier) is the layer carried by a
// Conv/ConvTranspose/Gemm/MatMul whose output reaches graph output 0 (the
// logits) along differentiable inputs without passing through another such
// layer op; ops holding only attached or standalone parameters (a bias Add, a
// normalization, a temperature) are passed through. It is an error when
// several layers qualify (ErrAmbiguousClassifier) or none does
// (ErrNoClassifier); an override names a layer by its name, its Op node's
// name or any member parameter's name, and an unknown name is an error
// (ErrUnknownLayer) that lists the valid layer names.
package graph
